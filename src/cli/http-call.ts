import { EventSourceParserStream, type EventSourceMessage } from "eventsource-parser/stream";
import { fetch, type Dispatcher, type Response } from "undici";
import { ConnectionError } from "./exit-codes.js";
import type { ResponseStream } from "./transport.js";

/**
 * The HTTP side shared by the JSON-RPC and HTTP+JSON bindings: one request with the version and
 * credential headers (undici's fetch, with a TLS dispatcher for --ca/--cert/--key), network
 * failures as connection errors, and server-sent events parsed by eventsource-parser.
 */

export interface HttpCallOptions {
  /** A2A-Version and the credentials, sent on every request. */
  readonly headers: Readonly<Record<string, string>>;
  /** An undici Agent with the TLS options; none: undici's default. */
  readonly dispatcher?: Dispatcher;
  /** Deadline of unary calls, ms (streams have none). */
  readonly timeoutMs?: number;
}

export interface HttpRequest {
  readonly method: "GET" | "POST" | "DELETE";
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Sends one request; a server that cannot be reached, or does not answer in time, is a ConnectionError. */
export async function send(request: HttpRequest, options: HttpCallOptions, signal?: AbortSignal): Promise<Response> {
  const deadline = options.timeoutMs && !signal ? AbortSignal.timeout(options.timeoutMs) : undefined;
  try {
    return await fetch(request.url, {
      method: request.method,
      headers: { ...options.headers, ...request.headers },
      body: request.body,
      signal: signal ?? deadline,
      dispatcher: options.dispatcher,
    });
  } catch (e) {
    if (signal?.aborted) throw e;
    if (deadline?.aborted) throw new ConnectionError(`no answer from ${request.url.origin} within ${options.timeoutMs} ms`);
    throw new ConnectionError(`cannot connect to ${request.url.origin}: ${networkCause(e)} (is the server running, and TLS as it expects?)`);
  }
}

/** The most telling part of a fetch failure: the socket's or TLS's error code. */
export function networkCause(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

/** The body as JSON; undefined when empty or not JSON (a proxy's HTML page, a 204). */
export async function jsonBody(response: Response): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (e) {
    throw new ConnectionError(`the answer from ${new URL(response.url).origin} broke off: ${networkCause(e)}`);
  }
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream");
}

/**
 * A server-sent event stream as a ResponseStream: `open` starts the request, `refusal` turns an
 * answer that is not an event stream into the binding's error, `decode` turns each event into a
 * message (or throws the binding's error for an error event). cancel() aborts the request.
 */
export function eventStream<T>(
  open: (signal: AbortSignal) => Promise<Response>,
  refusal: (response: Response) => Promise<Error>,
  decode: (event: EventSourceMessage) => T,
): ResponseStream<T> {
  const controller = new AbortController();
  let canceled = false;
  const iterate = async function* (): AsyncGenerator<T> {
    try {
      const response = await open(controller.signal);
      if (!response.ok || !isEventStream(response) || !response.body) throw await refusal(response);
      const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      const origin = new URL(response.url).origin;
      const reader = events.getReader();
      try {
        for (;;) {
          let next: Awaited<ReturnType<typeof reader.read>>;
          try {
            next = await reader.read();
          } catch (e) {
            if (canceled) return;
            throw new ConnectionError(`the stream from ${origin} broke off: ${networkCause(e)}`);
          }
          if (next.done) return;
          yield decode(next.value);
        }
      } finally {
        reader.releaseLock();
      }
    } catch (e) {
      // Our own cancel ends the stream quietly.
      if (canceled) return;
      throw e;
    } finally {
      controller.abort();
    }
  };
  return {
    [Symbol.asyncIterator]: iterate,
    cancel() {
      canceled = true;
      controller.abort();
    },
  };
}
