import type { Config } from "./config/config.js";
import type { ServedCard } from "./http/card-response.js";
import { startHttpListener, type HttpListener, type ListenerDocument } from "./http/http-listener.js";
import { createJsonRpcBinding, v1Dialect } from "./jsonrpc/jsonrpc-binding.js";
import { createV03Dialect } from "./jsonrpc/v03-jsonrpc-dialect.js";
import { METRICS_PATH } from "./observability/index.js";
import { createRestV03Binding, createRestV1Binding, REST_V03_ROUTER, REST_V1_ROUTER } from "./rest/index.js";
import { admissionOf } from "./service/call-admission.js";
import { CallObservers } from "./service/call-observer.js";
import type { CallMetadata } from "./service/face.js";
import { readVersion } from "./service/service-parameters.js";
import { v03HandlersOf } from "./v03/v03-service.js";

/*
 * The HTTP bindings on their listener, as createApp wires them: the listener binds before the
 * card is built (the card names its URL, with the port bound), and serves the card, the
 * JSON-RPC and HTTP+JSON bindings (each unless its path is off) and, when on this listener, /metrics.
 */

/** The HTTP listener with the bindings on it (A-35), while the listener and an HTTP binding are on. */
export interface BindingsListener {
  readonly port: number;
  /** Undefined when that binding is off (its path setting is `off`). */
  readonly jsonRpcUrl: string | undefined;
  readonly restUrl: string | undefined;
  /** The listener's public base URL (A2A_PUBLIC_HTTP_URL, or the bound address): the other bindings' card URLs start with it. */
  readonly baseUrl: string;
  /** Starts answering the card (and metrics, when on this listener). */
  serve(card: ServedCard, metrics: (() => Promise<ListenerDocument>) | undefined): void;
  useHandlers(handlers: object): void;
  /** Shutdown has begun: new calls are refused (UNAVAILABLE); calls and streams in flight go on. */
  stopAccepting(): void;
  close(): Promise<void>;
}

export async function startBindingsListener(
  config: Config,
  observers: CallObservers | undefined,
  onError: (error: Error) => void,
): Promise<BindingsListener | undefined> {
  const anyBinding = [config.jsonRpcPath, config.restPath, config.v03?.jsonRpcPath, config.v03?.restPath].some((path) => path != null);
  if (config.cardListen === null || !anyBinding) return undefined;
  const v03RestPath = config.v03?.restPath ?? null;
  let card: ServedCard | undefined;
  let handlers: object = {};
  let closing = false;
  const documents = new Map<string, () => Promise<ListenerDocument>>();
  const face = {
    handlers: () => handlers as Readonly<Record<string, unknown>>,
    admission: () => admissionOf(handlers),
    checkVersion: (metadata: CallMetadata) => void readVersion(metadata, { allowMissing: config.allowMissingVersion }),
    observers: observers ?? new CallObservers([], () => undefined),
    maxBodyBytes: config.maxMessageBytes,
    wwwAuthenticate: authChallenges(config.auth.schemes),
    closing: () => closing,
    sseKeepAliveMs: config.sseKeepAliveMs,
  };
  const { jsonRpcPath, restPath } = config;
  // A-36: the v0.3 JSON-RPC endpoint is the same engine in the 0.3 dialect, on its own path.
  const v03JsonRpcPath = config.v03?.jsonRpcPath ?? null;
  const jsonRpc = jsonRpcPath === null ? undefined : createJsonRpcBinding({ ...face, dialect: v1Dialect(v03JsonRpcPath) });
  const jsonRpcBindings = new Map(jsonRpc === undefined ? [] : [[jsonRpcPath!, jsonRpc]]);
  if (v03JsonRpcPath !== null) jsonRpcBindings.set(v03JsonRpcPath, createJsonRpcBinding({ ...face, dialect: createV03Dialect({ v1Path: jsonRpcPath }) }));
  const rest = restPath === null ? undefined : { handle: createRestV1Binding({ ...face, basePath: restPath }), methods: REST_V1_ROUTER.httpMethods.join(", ") };
  const v03Face = { ...face, handlers: () => (v03HandlersOf(handlers) ?? {}) as Readonly<Record<string, unknown>>, v1BasePath: restPath };
  const v03Rest =
    v03RestPath === null ? undefined : { handle: createRestV03Binding({ ...v03Face, basePath: v03RestPath }), methods: REST_V03_ROUTER.httpMethods.join(", ") };
  const listener: HttpListener = await startHttpListener({
    ...splitHostPort(config.cardListen),
    card: () => card,
    bindings: jsonRpcBindings,
    prefixBindings: new Map([
      ...(rest === undefined ? [] : ([[restPath!, rest]] as const)),
      ...(v03Rest === undefined ? [] : ([[v03RestPath!, v03Rest]] as const)),
    ]),
    documents,
    corsOrigins: config.corsOrigins,
    tls: config.tls ?? undefined,
    onError,
  });
  const base = config.publicHttpUrl ?? `${config.tls === null ? "http" : "https"}://${formatListenAddress(config.cardListen, listener.port)}`;
  return {
    port: listener.port,
    jsonRpcUrl: jsonRpcPath === null ? undefined : base + jsonRpcPath,
    restUrl: restPath === null ? undefined : base + restPath,
    baseUrl: base,
    serve(served, metrics) {
      card = served;
      if (metrics !== undefined) documents.set(METRICS_PATH, metrics);
    },
    useHandlers(installed) {
      handlers = installed;
    },
    stopAccepting() {
      closing = true;
    },
    close: () => listener.close(),
  };
}

/** The WWW-Authenticate challenges of the configured schemes (R-BIND-7); undefined when none asks for a header. */
function authChallenges(schemes: readonly string[]): string | undefined {
  const challenges = schemes.flatMap((scheme) =>
    scheme === "jwt" ? ['Bearer realm="a2a"'] : scheme === "api-key" ? ['ApiKey realm="a2a", header="X-API-Key"'] : [],
  );
  return challenges.length > 0 ? challenges.join(", ") : undefined;
}

function splitHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(colon + 1)) };
}

/** host:port of a listen address with the port bound (a wildcard host is not an address clients can use: 127.0.0.1 then). */
function formatListenAddress(address: string, port: number): string {
  const { host } = splitHostPort(address);
  const usable = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
  return `${usable.includes(":") ? `[${usable}]` : usable}:${port}`;
}
