import type { IncomingMessage, ServerResponse } from "node:http";
import type { JsonValue } from "@bufbuild/protobuf";
import type { CallAdmission } from "../service/call-admission.js";
import type { CallObservers, ObservedCall } from "../service/call-observer.js";
import type { ErrorStatus } from "../service/error-status.js";
import type { CallMetadata } from "../service/face.js";
import { Code } from "../service/status-code.js";
import { callStatusOf, transportSecurityOf, type HttpCallContext } from "./http-call-context.js";
import { BodyTooLargeError, readBody } from "./request-body.js";
import { SseWriter, type SseEvent } from "./sse-writer.js";

/*
 * The steps every JSON binding over HTTP takes for a call, in the order A-15 fixes (admission
 * from the headers, then the bounded body, then the closing and handler checks, then the run),
 * so that JSON-RPC and HTTP+JSON differ only in their wire: routing, decoding, the JSON of
 * results and errors. Each binding passes its own writers; none of these knows a body's shape.
 */

/** Writes a failure in the binding's error form (status and body); `headers` go with it. */
export type FailureWriter = (status: ErrorStatus, headers: Record<string, string>) => void;

/** Ends the call's record with the failure and answers it. */
export function failCall(observed: ObservedCall, status: ErrorStatus, writeFailure: FailureWriter, headers: Record<string, string> = {}): void {
  observed.end(status.code, status.message);
  writeFailure(status, headers);
}

/** What every JSON binding over HTTP is given for its calls (src/http-bindings.ts wires them alike). */
export interface HttpCallOptions {
  /** The face's handlers by RPC name; read per call. */
  handlers(): Readonly<Partial<Record<string, unknown>>>;
  /** Proves the caller from the headers before the body is read; undefined = authentication off. */
  admission(): CallAdmission | undefined;
  /** The version check (A-3, A-15: first), for when no admission runs it. Throws VersionNotSupportedError. */
  checkVersion(metadata: CallMetadata): void;
  readonly observers: CallObservers;
  /** A2A_MAX_MESSAGE_BYTES: larger bodies are refused with 413 (R-BIND-32). */
  readonly maxBodyBytes: number;
  /** The WWW-Authenticate challenge of a 401 (R-BIND-7): the configured schemes. */
  readonly wwwAuthenticate?: string | undefined;
  /** True once shutdown has begun: new calls are refused as UNAVAILABLE, as gRPC's are. */
  closing(): boolean;
  /** A2A_SSE_KEEPALIVE: a stream silent this long gets a comment line (R-BIND-37); null or absent = off. */
  readonly sseKeepAliveMs?: number | null;
}

/** One call's headers as admission reads them. */
export interface CallHeaders {
  readonly metadata: CallMetadata;
  /**
   * "0.3": the endpoint speaks v0.3 (A-36), so options.checkVersion (its own rule) runs even
   * under admission, which is told the version and then skips v1.0's check.
   */
  readonly protocolVersion?: "0.3" | undefined;
  /** Starts the record of a refused call (nothing of the body is known yet). */
  observeRefused(): ObservedCall;
}

/**
 * the version first, then the credentials, both from the headers alone, before a byte of
 * the body is read. On refusal the call is recorded and answered (with the challenge on a 401),
 * and false comes back.
 */
export async function admitFromHeaders(req: IncomingMessage, options: HttpCallOptions, call: CallHeaders, writeFailure: FailureWriter): Promise<boolean> {
  const admission = options.admission();
  try {
    if (admission === undefined || call.protocolVersion === "0.3") options.checkVersion(call.metadata);
    if (admission !== undefined) {
      const peerAddress = req.socket.remoteAddress ?? "unknown";
      const version = call.protocolVersion === undefined ? {} : { protocolVersion: call.protocolVersion };
      await admission.admit({ metadata: call.metadata, getAuthContext: () => transportSecurityOf(req), peerAddress, ...version });
    }
    return true;
  } catch (error) {
    const observed = call.observeRefused();
    const status = callStatusOf(error, observed);
    const challenge: Record<string, string> =
      status.code === Code.UNAUTHENTICATED && options.wwwAuthenticate ? { "WWW-Authenticate": options.wwwAuthenticate } : {};
    failCall(observed, status, writeFailure, challenge);
    return false;
  }
}

/**
 * The request body, at most `maxBytes` (R-BIND-32): a larger one is answered by `refuseTooLarge`
 * (the binding's 413) with Connection: close, as the rest is not read; a broken request is
 * dropped. Undefined when the call is over.
 */
export async function readBoundedBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
  refuseTooLarge: (message: string) => void,
): Promise<Buffer | undefined> {
  try {
    return await readBody(req, maxBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) {
      res.destroy();
      return undefined;
    }
    res.setHeader("Connection", "close"); // the rest of the body is not read
    refuseTooLarge(error.message);
    return undefined;
  }
}

/** Why a call is refused before its request is decoded: shutdown begun (UNAVAILABLE, as gRPC's) or no handler. */
export function refusalBeforeRun(closing: boolean, handler: unknown, unimplementedMessage: string): ErrorStatus | undefined {
  if (closing) return { code: Code.UNAVAILABLE, message: "server is shutting down", details: [] };
  if (typeof handler !== "function") return { code: Code.UNIMPLEMENTED, message: unimplementedMessage, details: [] };
  return undefined;
}

/** Runs a handler inside the call's scope (its trace context) when an observer asks for one. */
function inCallScope<T>(observers: CallObservers, observed: ObservedCall, body: () => T): T {
  return observers.wrapsRun ? observed.run(body) : body();
}

const CALL_ENDED: Error = Object.freeze(new Error("call ended"));

/** How a binding answers a unary call: the handler's run, its result as JSON, the 200 response. */
export interface UnaryWire<Response> {
  /** Runs the handler (inside the call's scope). */
  call(): Promise<Response>;
  /** The response as the binding's JSON (outside the scope). */
  encode(response: Response): JsonValue;
  writeResult(result: JsonValue, headers: Record<string, string>): void;
}

/**
 * A unary call: the result is answered by the wire (200); a failure by the binding's error form.
 * A client that left before its answer is recorded as unanswered.
 */
export async function runUnary<Response>(
  ctx: HttpCallContext,
  res: ServerResponse,
  observers: CallObservers,
  wire: UnaryWire<Response>,
  writeFailure: FailureWriter,
): Promise<void> {
  const { observed } = ctx;
  let result: JsonValue;
  try {
    result = wire.encode(await inCallScope(observers, observed, () => wire.call()));
  } catch (error) {
    ctx.end(CALL_ENDED);
    return failCall(observed, callStatusOf(error, observed), writeFailure, ctx.responseHeaders);
  }
  if (res.destroyed)
    observed.endUnanswered(Number.POSITIVE_INFINITY); // the client left before its answer
  else observed.end(Code.OK, undefined);
  wire.writeResult(result, ctx.responseHeaders);
  ctx.end(CALL_ENDED);
}

/** How a binding writes a stream: its events and the data of its closing `event: error`. */
export interface SseStreamWire<Event> {
  encode(event: Event): SseEvent;
  errorEventData(status: ErrorStatus): string;
  readonly keepAliveMs: number | null | undefined;
}

/**
 * A streaming call over Server-Sent Events (R-BIND-33..37), `start` inside the call's scope: a
 * failure before the first event is
 * an ordinary error response (R-BIND-36), after it one `event: error`, then the end. A client
 * that goes away ends its subscription (never the task): the call is recorded as cancelled.
 */
export async function runSseStream<Event>(
  ctx: HttpCallContext,
  res: ServerResponse,
  observers: CallObservers,
  wire: SseStreamWire<Event>,
  writeFailure: FailureWriter,
  start: (writer: SseWriter<Event>) => Promise<void>,
): Promise<void> {
  const writer = new SseWriter<Event>(res, ctx.responseHeaders, wire.encode, { keepAliveMs: wire.keepAliveMs });
  const { observed } = ctx;
  try {
    await inCallScope(observers, observed, () => start(writer));
    if (ctx.signal.aborted && !res.writableEnded) observed.endUnanswered(Number.POSITIVE_INFINITY);
    else observed.end(Code.OK, undefined);
    writer.end();
  } catch (error) {
    const status = callStatusOf(error, observed);
    if (!writer.started) {
      failCall(observed, status, writeFailure, ctx.responseHeaders);
    } else {
      observed.end(status.code, status.message);
      writer.endWithError(wire.errorEventData(status));
    }
  } finally {
    ctx.end(CALL_ENDED);
  }
}
