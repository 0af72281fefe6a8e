import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import type { CardFormBytes, CardVersions } from "../http/card-response.js";

/**
 * The plain-HTTP listener (the agent card, /metrics) runs on a thread of its own, so that its
 * requests never run on the thread that serves gRPC.
 *
 * Why: Node's stream and event-emitter code (Readable, Writable, EventEmitter.emit, nextTick) is
 * shared by gRPC's HTTP/2 streams and an HTTP/1 server's sockets. On a warm server, V8 has compiled
 * that code for the HTTP/2 streams' object shapes alone; one HTTP/1 request (a scrape, a 404, a
 * card fetch) brings new shapes, throws that code away ("wrong map", ~35 functions, `bench/
 * http-after.ts`), and the gRPC calls that follow cost 30–60% more until V8 has compiled it again,
 * and it happens again whenever the collector has dropped those shapes since the last request.
 * Measured with `npm run bench -- metrics-cost --pieces=unscraped,closed,404`: a metrics-on server
 * whose listener got no request after start-up read 1.03× metrics off; one scraped every 15 s,
 * or asked for a missing path instead, 1.2×. On its own thread (its own V8 isolate) the listener's
 * shapes never reach the gRPC thread's code. What the main thread still does per request: answer
 * a document request on a MessagePort (e.g. format the Prometheus registry).
 */

/** The agent card as served: its bytes and validators, computed once. */
export interface CardBytes {
  readonly path: string;
  readonly body: Uint8Array;
  readonly etag: string;
  readonly lastModifiedMs: number;
  /** The forms negotiated on A2A-Version when v0.3 is served too; body/etag are then the header-less form. */
  readonly byVersion?: CardVersions<CardFormBytes>;
}

/** A document the main thread makes per request (e.g. /metrics). */
export interface HttpDocument {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

export type DocumentSource = () => Promise<HttpDocument>;

export interface HttpThreadOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Serve the card (and CORS, conditional GET); without it, other paths get `notFound`. */
  readonly card?: CardBytes;
  /** Documents by path, made on the main thread for each GET or HEAD. */
  readonly documents?: ReadonlyMap<string, DocumentSource>;
  /** The 404 body when no card is served. */
  readonly notFound?: string;
  /** The thread failed after it started listening (an uncaught error in it). */
  readonly onError?: (error: Error) => void;
}

export interface HttpThread {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

// The messages between the two threads.
export interface HttpThreadData {
  readonly host: string;
  readonly port: number;
  readonly card: CardBytes | undefined;
  readonly documentPaths: readonly string[];
  readonly notFound: string;
  readonly documents: MessagePort;
}
export type FromHttpThread = { kind: "listening"; port: number } | { kind: "failed"; message: string; code: string | undefined } | { kind: "closed" };
export type ToHttpThread = { kind: "close" };
export interface DocumentRequest {
  readonly id: number;
  readonly path: string;
}
export interface DocumentReply extends HttpDocument {
  readonly id: number;
}

/**
 * The worker's module: the compiled file beside this one. Run from the TypeScript sources (the
 * tests), a two-line bootstrap registers tsx (a dev dependency: Node 20 cannot load TypeScript)
 * in the thread, then imports the .ts file.
 */
function workerModule(): { script: URL | string; eval: boolean } {
  const compiled = new URL("./http-thread-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return { script: compiled, eval: false };
  const source = new URL("./http-thread-worker.ts", import.meta.url).href;
  return { script: `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, eval: true };
}

/** Starts the listener's thread; resolves once it listens, rejects with the listen error (e.g. EADDRINUSE). */
export function startHttpThread(options: HttpThreadOptions): Promise<HttpThread> {
  const documents = options.documents ?? new Map<string, DocumentSource>();
  const channel = new MessageChannel();
  channel.port1.on("message", (request: DocumentRequest) => answer(documents, request, channel.port1));
  const entry = workerModule();
  const data: HttpThreadData = {
    host: options.host,
    port: options.port,
    card: options.card,
    documentPaths: [...documents.keys()],
    notFound: options.notFound ?? "not found\n",
    documents: channel.port2,
  };
  const worker = new Worker(entry.script, { eval: entry.eval, workerData: data, transferList: [channel.port2], stdout: false, stderr: false });
  return new Promise((resolve, reject) => {
    let listening = false;
    let closed: (() => void) | undefined;
    worker.on("message", (message: FromHttpThread) => {
      if (message.kind === "listening") {
        listening = true;
        resolve({ port: message.port, close: () => close() });
      } else if (message.kind === "failed") {
        channel.port1.close();
        void worker.terminate();
        reject(Object.assign(new Error(`${message.code ?? "listen"}: ${message.message}`), { code: message.code }));
      } else closed?.();
    });
    worker.on("error", (error) => {
      channel.port1.close();
      if (listening) options.onError?.(error);
      else reject(error);
    });
    // Once: a second close() waits for the first.
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= new Promise<void>((done) => {
        closed = () => {
          channel.port1.close();
          void worker.terminate().then(() => done());
        };
        worker.postMessage({ kind: "close" } satisfies ToHttpThread);
      }));
  });
}

/** Makes the document the thread asked for (its paths are this map's keys) and posts it back, or a 500. */
function answer(documents: ReadonlyMap<string, DocumentSource>, request: DocumentRequest, port: MessagePort): void {
  // Through a promise also when the source throws at once: a failure is a 500, never an uncaught error here.
  Promise.resolve()
    .then(documents.get(request.path)!)
    .then(
      (document) => port.postMessage({ id: request.id, ...document } satisfies DocumentReply),
      (error: unknown) =>
        port.postMessage({
          id: request.id,
          status: 500,
          contentType: "text/plain",
          body: `could not make ${request.path}: ${error instanceof Error ? error.message : String(error)}\n`,
        } satisfies DocumentReply),
    );
}
