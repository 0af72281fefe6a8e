import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toJson } from "@bufbuild/protobuf";
import { AgentCardSchema, type AgentCard } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/** The well-known location of the public card (R-CARD-1). */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";

export interface AgentCardServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly card: AgentCard;
  /** Other documents served on this listener, by path (e.g. /metrics); each handler answers its requests whole. */
  readonly routes?: ReadonlyMap<string, HttpRoute>;
}

export type HttpRoute = (req: IncomingMessage, res: ServerResponse) => void;

export interface AgentCardServer {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

const ALLOW = "GET, HEAD, OPTIONS";

/**
 * Serves the public Agent Card over plain HTTP: a gRPC-only server has no RPC for
 * it, so discovery needs this endpoint (R-CARD-1). The card is fixed for the life of
 * the process, so the body, its ETag and Last-Modified are computed once.
 */
export function startAgentCardServer(options: AgentCardServerOptions): Promise<AgentCardServer> {
  // ProtoJSON: camelCase names, enum names, unset optionals omitted, explicit false kept (R-DATA-5, R-CAP-5).
  const body = Buffer.from(JSON.stringify(toJson(AgentCardSchema, options.card)), "utf8");
  // Strong ETag from the exact bytes served (R-CARD-5).
  const etag = `"${createHash("sha256").update(body).digest("base64url")}"`;
  // HTTP dates have one-second precision; round down so If-Modified-Since with this value matches.
  const startedAt = Math.floor(Date.now() / 1000) * 1000;
  const lastModified = new Date(startedAt).toUTCString();

  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    const route = options.routes?.get(path);
    if (route !== undefined) return route(req, res);
    // A public, unauthenticated document: any origin may read it.
    res.setHeader("Access-Control-Allow-Origin", "*");
    if (path !== AGENT_CARD_PATH) return sendJson(res, 404, { error: `not found; the agent card is at ${AGENT_CARD_PATH}` });

    if (req.method === "OPTIONS") {
      // CORS preflight: clients (the official SDK among them) send an A2A-Version header.
      res.writeHead(204, {
        Allow: ALLOW,
        "Access-Control-Allow-Methods": ALLOW,
        "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*",
        "Access-Control-Max-Age": "600",
      });
      return res.end();
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", ALLOW);
      return sendJson(res, 405, { error: `method ${req.method} not allowed; use GET` });
    }

    const headers = {
      "Content-Type": "application/json",
      "Cache-Control": "public, max-age=300",
      ETag: etag,
      "Last-Modified": lastModified,
      "X-Content-Type-Options": "nosniff",
    };
    if (notModified(req, etag, startedAt)) {
      res.writeHead(304, headers);
      return res.end();
    }
    res.writeHead(200, { ...headers, "Content-Length": body.length });
    res.end(req.method === "HEAD" ? undefined : body);
  });

  return listenHttp(server, options.host, options.port);
}

/**
 * Conditional GET (RFC 9110 §13.1): If-None-Match wins when present (weak comparison,
 * `*` matches); otherwise If-Modified-Since compares against the start time.
 */
function notModified(req: IncomingMessage, etag: string, lastModifiedMs: number): boolean {
  const ifNoneMatch = req.headers["if-none-match"];
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch
      .split(",")
      .map((tag) => tag.trim().replace(/^W\//, ""))
      .some((tag) => tag === "*" || tag === etag);
  }
  const ifModifiedSince = req.headers["if-modified-since"];
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    return !Number.isNaN(since) && lastModifiedMs <= since;
  }
  return false;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** Listens on host:port; `close` also ends idle keep-alive sockets, which would otherwise hold it open. */
export function listenHttp(server: Server, host: string, port: number): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
