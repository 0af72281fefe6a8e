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
import { serveCard, servedCardOf, type ServedCard } from "../http/card-response.js";

const data = workerData as HttpThreadData;

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
const card: ServedCard | undefined = data.card === undefined ? undefined : servedCardOf(data.card);
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
