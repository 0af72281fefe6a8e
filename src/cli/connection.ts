import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { ConnectionError, UsageError } from "./exit-codes.js";

/**
 * Where the CLI connects and how it authenticates: the server named on the command line,
 * or the GRPC interface of an agent card, plus the credentials options.
 */

export const DEFAULT_SERVER = "127.0.0.1:50051";
/** Where `a2a card` reads the card when no URL is given: the server's default card listener. */
export const DEFAULT_CARD_URL = "http://127.0.0.1:8080/.well-known/agent-card.json";
const WELL_KNOWN_CARD_PATH = "/.well-known/agent-card.json";

export interface ConnectionOptions {
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
  /** host:port for grpc-js. */
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
export async function fetchCard(value: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const url = cardUrl(value);
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: "application/json", "a2a-version": "1.0" }, signal: AbortSignal.timeout(timeoutMs) });
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

/** The card's first GRPC interface of protocol version 1.x. */
export function grpcInterfaceOf(card: Record<string, unknown>, source: string): { address: string; tls: boolean; tenant: string } {
  const interfaces = (Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : []) as CardInterface[];
  const itf = interfaces.find((i) => i.protocolBinding?.toUpperCase() === "GRPC" && (!i.protocolVersion || i.protocolVersion.startsWith("1.")));
  if (!itf?.url) throw new ConnectionError(`the agent card at ${source} lists no GRPC interface for A2A 1.x`);
  return { ...parseServer(itf.url), tenant: itf.tenant ?? "" };
}

/** Decides the target: --server wins, then --card, then the default address. */
export async function resolveTarget(options: ConnectionOptions): Promise<Target> {
  const useTls = (scheme: boolean) => scheme || options.tls || Boolean(options.ca || options.cert);
  if (options.server) {
    const s = parseServer(options.server);
    return { address: s.address, tls: useTls(s.tls), tenant: options.tenant ?? "" };
  }
  if (options.card) {
    const found = grpcInterfaceOf(await fetchCard(options.card, options.timeoutMs), options.card);
    return { address: found.address, tls: useTls(found.tls), tenant: options.tenant ?? found.tenant };
  }
  return { address: DEFAULT_SERVER, tls: useTls(false), tenant: options.tenant ?? "" };
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
