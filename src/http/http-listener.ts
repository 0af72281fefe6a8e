import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { sendJson, serveCard, type ServedCard } from "./card-response.js";

/*
 * The one HTTP listener on the main thread: the agent card, the HTTP bindings (JSON-RPC,
 * HTTP+JSON) and the documents (metrics). Why the main thread: a binding's calls run the service's
 * core, which lives here; bridging every call and stream event from a listener thread would
 * re-create admission and the call seam on the other side. With every HTTP binding off the
 * server keeps the card on its own thread instead (src/protocol/http-thread.ts says why).
 * Why node:http: the two routes it has need no framework, and its IncomingMessage/ServerResponse
 * are what the SSE streams write to directly (flush per event, socket back-pressure).
 */

/** A document made per request (e.g. /metrics). */
export interface ListenerDocument {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HttpListenerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The card as served; read per request (the card names the listener's bound port, so it is made after listen). */
  card(): ServedCard | undefined;
  /** The bindings by path (e.g. "/a2a/jsonrpc" → JSON-RPC). */
  readonly bindings: ReadonlyMap<string, RequestHandler>;
  /** Bindings that answer every path under a base (e.g. "/a2a/rest" → HTTP+JSON), with the HTTP methods CORS allows them. */
  readonly prefixBindings?: ReadonlyMap<string, { readonly handle: RequestHandler; readonly methods: string }>;
  /** Documents by path, made per GET or HEAD. */
  readonly documents?: ReadonlyMap<string, () => Promise<ListenerDocument>>;
  /** Origins browsers may call the bindings from ("*": any); empty = no CORS headers (A2A_CORS_ORIGINS). */
  readonly corsOrigins: readonly string[];
  /** The gRPC listener's TLS (R-BIND-9): TLS 1.2 at least; with `clientCa`, client certificates required (mTLS). */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly clientCa: Buffer | null } | undefined;
  readonly onError?: (error: Error) => void;
}

export interface HttpListener {
  readonly port: number;
  /** Stops listening and closes every connection (open streams end; their tasks do not). */
  close(): Promise<void>;
}

export function startHttpListener(options: HttpListenerOptions): Promise<HttpListener> {
  const documents = options.documents ?? new Map();
  const route = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    const binding = options.bindings.get(path);
    if (binding !== undefined) {
      if (allowCors(options.corsOrigins, req, res, "POST")) return;
      return binding(req, res);
    }
    const prefixed = prefixBindingOf(options.prefixBindings, path);
    if (prefixed !== undefined) {
      if (allowCors(options.corsOrigins, req, res, prefixed.methods)) return;
      return prefixed.handle(req, res);
    }
    const document = documents.get(path);
    if (document !== undefined) return serveDocument(document, req, res, options.onError);
    const card = options.card();
    if (card !== undefined) return serveCard(card, path, req, res);
    sendJson(res, 503, { error: "starting" });
  };
  const tls = options.tls;
  const server =
    tls === undefined
      ? createServer(route)
      : createTlsServer(
          {
            cert: tls.cert,
            key: tls.key,
            minVersion: "TLSv1.2",
            ...(tls.clientCa === null ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }),
          },
          route,
        );
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      server.on("error", (error) => options.onError?.(error));
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

function serveDocument(make: () => Promise<ListenerDocument>, req: IncomingMessage, res: ServerResponse, onError?: (error: Error) => void): void {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    return sendJson(res, 405, { error: `method ${req.method} not allowed; use GET` });
  }
  make().then(
    (doc) => {
      const body = typeof doc.body === "string" ? Buffer.from(doc.body, "utf8") : Buffer.from(doc.body);
      res.writeHead(doc.status, { ...doc.headers, "Content-Type": doc.contentType, "Content-Length": body.length });
      res.end(req.method === "HEAD" ? undefined : body);
    },
    (error: unknown) => {
      onError?.(error instanceof Error ? error : new Error(String(error)));
      sendJson(res, 500, { error: "internal error" });
    },
  );
}

/**
 * CORS for the bindings, off unless origins are configured. Sets the headers for an allowed
 * origin; answers a preflight itself (true = answered).
 */
function allowCors(origins: readonly string[], req: IncomingMessage, res: ServerResponse, methods: string): boolean {
  const origin = req.headers.origin;
  if (origins.length === 0 || origin === undefined) return false;
  if (!origins.includes("*") && !origins.includes(origin)) return false;
  res.setHeader("Access-Control-Allow-Origin", origins.includes("*") ? "*" : origin);
  res.setHeader("Vary", "Origin");
  res.setHeader("Access-Control-Expose-Headers", "A2A-Extensions");
  if (req.method !== "OPTIONS") return false;
  res.writeHead(204, {
    "Access-Control-Allow-Methods": methods,
    "Access-Control-Allow-Headers": "Content-Type, Authorization, A2A-Version, A2A-Extensions, X-API-Key, Last-Event-ID",
    "Access-Control-Max-Age": "600",
  });
  res.end();
  return true;
}

/** The prefix binding whose base is `path` or a folder of it. */
function prefixBindingOf<T>(bindings: ReadonlyMap<string, T> | undefined, path: string): T | undefined {
  if (bindings === undefined) return undefined;
  for (const [base, binding] of bindings) if (path === base || path.startsWith(`${base}/`)) return binding;
  return undefined;
}
