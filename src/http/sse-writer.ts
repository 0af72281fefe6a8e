import type { ServerResponse } from "node:http";
import type { StreamWriter } from "../service/face.js";

/** One SSE event: its data (one line of compact JSON) and, optionally, its id. */
export interface SseEvent {
  readonly id?: string | undefined;
  readonly data: string;
}

export interface SseWriterOptions {
  /** A2A_SSE_KEEPALIVE: after this long without a write the stream gets a `: keep-alive` comment (R-BIND-37); null or absent = never. */
  readonly keepAliveMs?: number | null | undefined;
}

/** The comment an idle stream gets (R-BIND-37). */
export const KEEP_ALIVE_COMMENT = "keep-alive";

/**
 * The face's StreamWriter over a Server-Sent Events response (R-BIND-33): the head (200,
 * text/event-stream, no caching, no proxy buffering, the handler's response headers) goes out
 * with the first event; each event is written at once; back-pressure is the socket's. From the
 * head on, a stream silent for keepAliveMs gets a comment line.
 */
export class SseWriter<O> implements StreamWriter<O> {
  #started = false;
  readonly #keepAliveMs: number | null;
  #keepAlive: NodeJS.Timeout | undefined;
  /** When the stream was last written to (performance.now()); the one timer compares against it. */
  #lastWriteAt = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly headers: Readonly<Record<string, string>>,
    private readonly encode: (message: O) => SseEvent,
    options: SseWriterOptions = {},
  ) {
    this.#keepAliveMs = options.keepAliveMs ?? null;
  }

  get started(): boolean {
    return this.#started;
  }

  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  write(message: O): boolean {
    if (this.closed) return false;
    const event = this.encode(message);
    this.#start();
    this.#lastWriteAt = performance.now();
    // JSON.stringify output holds no raw newline, so one data line is the whole document.
    return this.res.write(event.id === undefined ? `data: ${event.data}\n\n` : `id: ${event.id}\ndata: ${event.data}\n\n`);
  }

  waitForDrain(): Promise<void> {
    if (this.closed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off("drain", done);
        this.res.off("close", done);
        resolve();
      };
      this.res.on("drain", done);
      this.res.on("close", done);
    });
  }

  /** A comment line (ignored by clients) that keeps an idle stream open through proxies (R-BIND-37). */
  comment(text: string): void {
    if (this.closed) return;
    this.#start();
    this.#lastWriteAt = performance.now();
    this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.#start();
    this.#stopKeepAlive();
    this.res.end();
  }

  /** Ends the stream with one `event: error` (R-JRPC-15, R-BIND-34). */
  endWithError(data: string): void {
    if (this.closed) return;
    this.#start();
    this.#stopKeepAlive();
    this.res.end(`event: error\ndata: ${data}\n\n`);
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    this.res.writeHead(200, {
      ...this.headers,
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      "X-Accel-Buffering": "no",
    });
    this.res.flushHeaders();
    this.#startKeepAlive();
  }

  /*
   * One timer per stream, never re-armed per event: writes only stamp #lastWriteAt; when the
   * timer fires it sends the comment if the stream has been silent long enough, and otherwise
   * sleeps for the rest of the interval counted from the last write.
   */
  #startKeepAlive(): void {
    const interval = this.#keepAliveMs;
    if (interval === null || this.closed) return;
    this.#lastWriteAt = performance.now();
    const tick = () => {
      if (this.closed) return this.#stopKeepAlive();
      const silentFor = performance.now() - this.#lastWriteAt;
      if (silentFor >= interval) {
        this.comment(KEEP_ALIVE_COMMENT);
        this.#keepAlive = setTimeout(tick, interval).unref();
      } else {
        this.#keepAlive = setTimeout(tick, interval - silentFor).unref();
      }
    };
    this.#keepAlive = setTimeout(tick, interval).unref();
    this.res.once("close", () => this.#stopKeepAlive());
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive === undefined) return;
    clearTimeout(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}
