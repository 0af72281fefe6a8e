/**
 * The HTTP listener's own thread (see http-thread.ts for why it has one). It answers the agent
 * card from the bytes it was given at start, and each document path (e.g. /metrics) by asking the
 * main thread for the document over `documents`, a MessagePort.
 *
 * Only node: modules here: the thread loads nothing of the service.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import type { DocumentReply, DocumentRequest, FromHttpThread, HttpThreadData, ToHttpThread } from "./http-thread.js";

const data = workerData as HttpThreadData;
const CARD_ALLOW = "GET, HEAD, OPTIONS";

/** Document requests waiting for the main thread's reply, by id. */
const waiting = new Map<number, { req: IncomingMessage; res: ServerResponse }>();
let nextId = 0;
const documents: MessagePort = data.documents;
documents.on("message", (reply: DocumentReply) => {
  const pending = waiting.get(reply.id);
  if (pending === undefined) return;
  waiting.delete(reply.id);
  const body = typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : Buffer.from(reply.body);
  pending.res.writeHead(reply.status, { ...reply.headers, "Content-Type": reply.contentType, "Content-Length": body.length });
  pending.res.end(pending.req.method === "HEAD" ? undefined : body);
});

const paths = new Set(data.documentPaths);
// The card's bytes as a Buffer view (no copy) and its Last-Modified text, once for the thread's life.
const card =
  data.card === undefined
    ? undefined
    : {
        ...data.card,
        bytes: Buffer.from(data.card.body.buffer, data.card.body.byteOffset, data.card.body.byteLength),
        lastModified: new Date(data.card.lastModifiedMs).toUTCString(),
      };
type ServedCard = NonNullable<typeof card>;
const server = createServer((req, res) => {
  const path = (req.url ?? "/").split("?", 1)[0]!;
  if (paths.has(path)) return askForDocument(path, req, res);
  if (card !== undefined) return serveCard(card, path, req, res);
  res.writeHead(404, { "Content-Type": "text/plain" });
  res.end(data.notFound);
});

function askForDocument(path: string, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" });
    res.end(`method ${req.method} not allowed; use GET\n`);
    return;
  }
  const id = nextId++;
  waiting.set(id, { req, res });
  // A client that goes away before the reply: nothing to write it to.
  res.on("close", () => waiting.delete(id));
  documents.postMessage({ id, path } satisfies DocumentRequest);
}

/** The public Agent Card (R-CARD-1), with CORS, conditional GET and HEAD (R-CARD-5). */
function serveCard(card: ServedCard, path: string, req: IncomingMessage, res: ServerResponse): void {
  // A public, unauthenticated document: any origin may read it.
  res.setHeader("Access-Control-Allow-Origin", "*");
  if (path !== card.path) return sendJson(res, 404, { error: `not found; the agent card is at ${card.path}` });
  if (req.method === "OPTIONS") {
    // CORS preflight: clients (the official SDK among them) send an A2A-Version header.
    res.writeHead(204, {
      Allow: CARD_ALLOW,
      "Access-Control-Allow-Methods": CARD_ALLOW,
      "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*",
      "Access-Control-Max-Age": "600",
    });
    res.end();
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", CARD_ALLOW);
    return sendJson(res, 405, { error: `method ${req.method} not allowed; use GET` });
  }
  const headers = {
    "Content-Type": "application/json",
    "Cache-Control": "public, max-age=300",
    ETag: card.etag,
    "Last-Modified": card.lastModified,
    "X-Content-Type-Options": "nosniff",
  };
  if (notModified(req, card.etag, card.lastModifiedMs)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "Content-Length": card.bytes.length });
  res.end(req.method === "HEAD" ? undefined : card.bytes);
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

const post = (message: FromHttpThread) => parentPort!.postMessage(message);

server.once("error", (error: NodeJS.ErrnoException) => {
  post({ kind: "failed", message: error.message, code: error.code });
  documents.close();
});
server.listen(data.port, data.host, () => post({ kind: "listening", port: (server.address() as AddressInfo).port }));

parentPort!.on("message", (message: ToHttpThread) => {
  if (message.kind !== "close") return;
  server.close(() => {
    documents.close();
    post({ kind: "closed" });
  });
  // Idle keep-alive connections would otherwise hold the listener open.
  server.closeAllConnections();
});
