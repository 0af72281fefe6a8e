import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { Agent, fetch, type Dispatcher, type Response } from "undici";
import { ConnectionError, UsageError } from "./exit-codes.js";
import { BINDINGS, type BindingName } from "./transport.js";

/**
 * Where the CLI connects and how it authenticates: the server named on the command line,
 * or an interface of an agent card (the one of --binding, else the first the CLI speaks),
 * plus the credentials options.
 */

export const DEFAULT_SERVER = "127.0.0.1:50051";
/** Where `a2a card` reads the card when no URL is given: the server's default card listener. */
export const DEFAULT_CARD_URL = "http://127.0.0.1:8080/.well-known/agent-card.json";
const WELL_KNOWN_CARD_PATH = "/.well-known/agent-card.json";

export interface ConnectionOptions {
  /** --binding; none: the card's first interface the CLI speaks, or gRPC. */
  readonly binding?: BindingName;
  readonly server?: string;
  readonly card?: string;
  readonly tenant?: string;
  readonly tls: boolean;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
  readonly apiKey?: string;
  readonly apiKeyHeader: string;
  readonly timeoutMs?: number;
}

export interface Target {
  readonly binding: BindingName;
  /** host:port for grpc-js; the interface URL for JSON-RPC and HTTP+JSON. */
  readonly address: string;
  readonly tls: boolean;
  /** The tenant to send: the option's, or the card interface's. */
  readonly tenant: string;
}

/** Splits `grpc://h:p`, `https://h:p`, `h:p` into an address and whether the scheme asks for TLS. */
export function parseServer(value: string): { address: string; tls: boolean } {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(value);
  let rest = value;
  let tls = false;
  if (m) {
    const scheme = m[1]!.toLowerCase();
    if (!["grpc", "grpcs", "http", "https"].includes(scheme))
      throw new UsageError(`server "${value}": unknown scheme ${scheme}:// (use host:port, grpc:// or grpcs://)`);
    tls = scheme === "grpcs" || scheme === "https";
    rest = m[2]!.replace(/\/.*$/, "");
  }
  const hostPort = /^(\[[0-9a-f:.]+\]|[^:/\s[\]]+):(\d{1,5})$/i.exec(rest);
  if (!hostPort || Number(hostPort[2]) > 65535) throw new UsageError(`server "${value}" is not host:port`);
  return { address: rest, tls };
}

/** The card's URL: a bare origin gets the well-known path. */
export function cardUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`card URL "${value}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`card URL "${value}" must be http:// or https://`);
  if (url.pathname === "/" || url.pathname === "") url.pathname = WELL_KNOWN_CARD_PATH;
  return url;
}

/** Fetches an agent card as JSON (ProtoJSON of lf.a2a.v1.AgentCard). */
export async function fetchCard(value: string, timeoutMs = 10_000, dispatcher?: Dispatcher): Promise<Record<string, unknown>> {
  const url = cardUrl(value);
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: "application/json", "a2a-version": "1.0" }, signal: AbortSignal.timeout(timeoutMs), dispatcher });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new ConnectionError(`could not fetch the agent card ${url.href}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  if (!response.ok) throw new ConnectionError(`could not fetch the agent card ${url.href}: HTTP ${response.status}`);
  try {
    return (await response.json()) as Record<string, unknown>;
  } catch {
    throw new ConnectionError(`the agent card at ${url.href} is not JSON`);
  }
}

interface CardInterface {
  url?: string;
  protocolBinding?: string;
  tenant?: string;
  protocolVersion?: string;
}

/** A card's interface url for `binding`: host:port for gRPC, the absolute URL for the HTTP bindings. */
function interfaceTarget(binding: BindingName, url: string): { address: string; tls: boolean } {
  if (binding === "grpc") return parseServer(url);
  const parsed = httpUrl(url);
  return { address: parsed.href, tls: parsed.protocol === "https:" };
}

/** The card's interface for `binding` (A2A 1.x); without one, its first interface of a binding the CLI speaks. */
export function cardInterfaceOf(
  card: Record<string, unknown>,
  source: string,
  binding?: BindingName,
): { binding: BindingName; address: string; tls: boolean; tenant: string } {
  const interfaces = (Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []) as CardInterface[];
  const nameOf = (itf: CardInterface) => (Object.keys(BINDINGS) as BindingName[]).find((b) => BINDINGS[b] === itf.protocolBinding?.toUpperCase());
  const itf = interfaces.find((i) => {
    const name = nameOf(i);
    return name !== undefined && (binding === undefined || name === binding) && (!i.protocolVersion || i.protocolVersion.startsWith("1."));
  });
  if (!itf?.url)
    throw new ConnectionError(`the agent card at ${source} lists no ${binding ? BINDINGS[binding] : "GRPC, JSONRPC or HTTP+JSON"} interface for A2A 1.x`);
  const found = nameOf(itf)!;
  return { binding: found, ...interfaceTarget(found, itf.url), tenant: itf.tenant ?? "" };
}

/** An http(s) URL of an HTTP binding; a bare host:port is http:// (https:// with --tls). */
function httpUrl(value: string, tls = false): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `${tls ? "https" : "http"}://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`server "${value}" is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`server "${value}": the HTTP bindings need http:// or https://`);
  return url;
}

/** Decides the target: --server wins, then --card, then the default address (gRPC unless --binding says otherwise). */
export async function resolveTarget(options: ConnectionOptions): Promise<Target> {
  const useTls = (scheme: boolean) => scheme || options.tls || Boolean(options.ca || options.cert);
  const binding = options.binding ?? "grpc";
  if (options.server && binding !== "grpc") {
    const url = httpUrl(options.server, useTls(false));
    return { binding, address: url.href, tls: url.protocol === "https:", tenant: options.tenant ?? "" };
  }
  if (options.server) {
    const s = parseServer(options.server);
    return { binding, address: s.address, tls: useTls(s.tls), tenant: options.tenant ?? "" };
  }
  if (options.card) {
    const found = cardInterfaceOf(await fetchCard(options.card, options.timeoutMs, httpDispatcher(options)), options.card, options.binding);
    return { ...found, tls: found.binding === "grpc" ? useTls(found.tls) : found.tls, tenant: options.tenant ?? found.tenant };
  }
  if (binding !== "grpc") throw new UsageError(`--binding ${binding} needs --card URL or --server URL (the interface's URL)`);
  return { binding, address: DEFAULT_SERVER, tls: useTls(false), tenant: options.tenant ?? "" };
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new UsageError(`cannot read the ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** Channel credentials: plaintext, or TLS with an optional CA and client certificate (mTLS). */
export function channelCredentials(target: Target, options: ConnectionOptions): grpc.ChannelCredentials {
  if (!target.tls) return grpc.credentials.createInsecure();
  if (Boolean(options.cert) !== Boolean(options.key)) throw new UsageError("--cert and --key go together");
  return grpc.credentials.createSsl(
    options.ca ? readPem(options.ca, "CA bundle (--ca)") : null,
    options.key ? readPem(options.key, "client key (--key)") : null,
    options.cert ? readPem(options.cert, "client certificate (--cert)") : null,
  );
}

/**
 * Metadata on every call: a2a-version 1.0 and the credentials. They go as plain metadata
 * rather than call credentials, which grpc-js refuses on a plaintext channel (a server on
 * loopback behind a TLS-terminating proxy is a real deployment).
 */
export function callMetadata(options: ConnectionOptions): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  if (options.token) md.set("authorization", `Bearer ${options.token}`);
  if (options.apiKey) md.set(options.apiKeyHeader.toLowerCase(), options.apiKey);
  return md;
}

/** The TLS options for the HTTP bindings (and the card): an undici Agent with --ca, --cert, --key; none without them. */
export function httpDispatcher(options: ConnectionOptions): Dispatcher | undefined {
  if (!options.ca && !options.cert && !options.key) return undefined;
  if (Boolean(options.cert) !== Boolean(options.key)) throw new UsageError("--cert and --key go together");
  return new Agent({
    connect: {
      ...(options.ca ? { ca: readPem(options.ca, "CA bundle (--ca)") } : {}),
      ...(options.cert ? { cert: readPem(options.cert, "client certificate (--cert)") } : {}),
      ...(options.key ? { key: readPem(options.key, "client key (--key)") } : {}),
    },
  });
}

/** Headers on every HTTP-binding request: A2A-Version 1.0 (§3.6) and the credentials, as on gRPC. */
export function httpHeaders(options: ConnectionOptions): Record<string, string> {
  return {
    "a2a-version": "1.0",
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    ...(options.apiKey ? { [options.apiKeyHeader.toLowerCase()]: options.apiKey } : {}),
  };
}
