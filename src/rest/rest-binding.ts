import type { IncomingMessage, ServerResponse } from "node:http";
import type { DescMethod, JsonValue, Message } from "@bufbuild/protobuf";
import { requestMetadata } from "../http/header-metadata.js";
import { HttpCallContext, callStatusOf, peerOf, transportSecurityOf } from "../http/http-call-context.js";
import { BodyTooLargeError, readBody } from "../http/request-body.js";
import { SseWriter, type SseEvent } from "../http/sse-writer.js";
import type { CallAdmission } from "../service/call-admission.js";
import type { CallObservers, ObservedCall } from "../service/call-observer.js";
import type { ErrorStatus } from "../service/error-status.js";
import type { CallMetadata, ServerStreamHandler, UnaryHandler } from "../service/face.js";
import { Code } from "../service/status-code.js";
import type { HttpRoute, HttpRuleRouter } from "./http-rule-router.js";
import type { RestFailure } from "./rest-errors.js";

/*
 * An HTTP+JSON binding (§11, R-HTTP-*) over the face's handlers, in the order of the JSON-RPC
 * binding (R-BIND-8, A-15): the route (404 / 405 + Allow), the content type, admission (version
 * and credentials from the headers, before a byte of the body is read), the bounded body, the
 * request message from path, query and body, the handler, the response. Every call is reported to
 * the same observers as gRPC's, with binding "rest". What is particular to one A2A version (the
 * routes, the JSON of requests, responses, events and errors) comes in as the router and codec,
 * so a v0.3 REST binding runs on this same code.
 */

/** How one version of the binding reads and writes its wire. */
export interface RestCodec {
  /** The response Content-Type (errors too). */
  readonly contentType: string;
  /** Whether a request body of this Content-Type is read (else 415, BQ-14); undefined = header absent. */
  acceptsContentType(contentType: string | undefined): boolean;
  /** The RPC's input message; throws InvalidRequestError for a bad one. */
  decodeRequest(route: HttpRoute, variables: Readonly<Record<string, string>>, query: URLSearchParams, body: Buffer): Message;
  /** A unary response as JSON. */
  responseJson(method: DescMethod, request: Message, response: Message): JsonValue;
  /** One stream message as an SSE event. */
  streamEvent(response: Message): SseEvent;
  /** A failure the face reported. */
  failure(status: ErrorStatus): RestFailure<object>;
  /** A failure of HTTP itself: no route (404), wrong method (405), media type (415), size (413). */
  transportFailure(httpStatus: number, message: string): RestFailure<object>;
}

export interface RestBindingOptions {
  readonly router: HttpRuleRouter;
  readonly codec: RestCodec;
  /** The binding's base path on the listener ("/a2a/rest"); routes are matched below it. */
  readonly basePath: string;
  /** The service name calls are observed under (lf.a2a.v1.A2AService). */
  readonly serviceName: string;
  /**
   * "0.3": the binding speaks v0.3, so checkVersion (its own rule) runs even under
   * admission, which then skips the v1.0 version check (as on the v0.3 gRPC service).
   */
  readonly protocolVersion?: "0.3";
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
  /** A2A_SSE_KEEPALIVE: silence after which a stream gets a comment line (R-BIND-37); null = none. */
  readonly sseKeepAliveMs?: number | null;
}

/** The binding's request handler for every path under its base on the HTTP listener. */
export function createRestBinding(options: RestBindingOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    serve(options, req, res).catch((error: unknown) => {
      // Unreachable by design (every step answers its own failures); never leave a request hanging.
      if (!res.headersSent) send(res, options.codec, options.codec.transportFailure(500, "Internal error"));
      else res.destroy(error instanceof Error ? error : undefined);
    });
  };
}

async function serve(options: RestBindingOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { codec } = options;
  const url = req.url ?? "/";
  const queryAt = url.indexOf("?");
  const path = (queryAt < 0 ? url : url.slice(0, queryAt)).slice(options.basePath.length);
  const match = options.router.match(req.method ?? "", path);
  if (match.kind === "none") return send(res, codec, codec.transportFailure(404, `no HTTP+JSON route ${req.method} ${shownPath(path)}`));
  if (match.kind === "wrong-method") {
    res.setHeader("Allow", match.allow.join(", "));
    return send(res, codec, codec.transportFailure(405, `HTTP method ${req.method} is not allowed here: use ${match.allow.join(" or ")}`));
  }
  const { route } = match;
  if (hasBody(req) && !codec.acceptsContentType(req.headers["content-type"]))
    return send(res, codec, codec.transportFailure(415, `Content-Type must be JSON (${codec.contentType})`));
  const metadata = requestMetadata(req);
  const method = route.method;
  const streaming = method.methodKind === "server_streaming";
  const admission = options.admission();
  try {
    // the version first, then the credentials, both from the headers alone.
    if (admission === undefined || options.protocolVersion === "0.3") options.checkVersion(metadata);
    const peerAddress = req.socket.remoteAddress ?? "unknown";
    const version = options.protocolVersion === undefined ? {} : { protocolVersion: options.protocolVersion };
    if (admission !== undefined) await admission.admit({ metadata, getAuthContext: () => transportSecurityOf(req), peerAddress, ...version });
  } catch (error) {
    const observed = options.observers.begin(options.serviceName, method.name, streaming, peerOf(req), metadata, "rest");
    const status = callStatusOf(error, observed);
    const challenge: Record<string, string> =
      status.code === Code.UNAUTHENTICATED && options.wwwAuthenticate ? { "WWW-Authenticate": options.wwwAuthenticate } : {};
    return fail(res, codec, observed, status, challenge);
  }
  let body: Buffer;
  try {
    body = await readBody(req, options.maxBodyBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) return void res.destroy();
    res.setHeader("Connection", "close"); // the rest of the body is not read
    return send(res, codec, codec.transportFailure(413, error.message));
  }
  const observed = options.observers.begin(options.serviceName, method.name, streaming, peerOf(req), metadata, "rest");
  if (options.closing()) return fail(res, codec, observed, { code: Code.UNAVAILABLE, message: "server is shutting down", details: [] });
  const handler = options.handlers()[method.name];
  if (typeof handler !== "function") return fail(res, codec, observed, { code: Code.UNIMPLEMENTED, message: `${method.name} is not implemented`, details: [] });
  let request: Message;
  try {
    request = codec.decodeRequest(route, match.variables, new URLSearchParams(queryAt < 0 ? "" : url.slice(queryAt + 1)), body);
  } catch (error) {
    return fail(res, codec, observed, callStatusOf(error, observed));
  }
  const ctx = new HttpCallContext(method.name, metadata, observed, req, res);
  const run = <T>(body: () => T): T => (options.observers.wrapsRun ? observed.run(body) : body());
  if (streaming)
    return runStream(codec, ctx, res, options.sseKeepAliveMs, (writer) => run(() => (handler as ServerStreamHandler<Message, Message>)(request, ctx, writer)));
  let result: JsonValue;
  try {
    const response = await run(() => (handler as UnaryHandler<Message, Message>)(request, ctx));
    result = codec.responseJson(method, request, response);
  } catch (error) {
    ctx.end(CALL_ENDED);
    return fail(res, codec, observed, callStatusOf(error, observed), ctx.responseHeaders);
  }
  if (res.destroyed)
    observed.endUnanswered(Number.POSITIVE_INFINITY); // the client left before its answer
  else observed.end(Code.OK, undefined);
  sendJson(res, codec.contentType, 200, result, ctx.responseHeaders);
  ctx.end(CALL_ENDED);
}

const CALL_ENDED: Error = Object.freeze(new Error("call ended"));

/**
 * A streaming RPC over Server-Sent Events (R-HTTP-13..17): each event the codec's JSON of one
 * stream message; a failure before the first event is an ordinary error response (R-BIND-36),
 * after it one `event: error` with the error body, then the end. A client that goes away ends its
 * subscription, never the task.
 */
async function runStream(
  codec: RestCodec,
  ctx: HttpCallContext,
  res: ServerResponse,
  keepAliveMs: number | null | undefined,
  start: (writer: SseWriter<Message>) => Promise<void>,
): Promise<void> {
  const writer = new SseWriter<Message>(res, ctx.responseHeaders, (response) => codec.streamEvent(response), { keepAliveMs });
  const { observed } = ctx;
  try {
    await start(writer);
    if (ctx.signal.aborted && !res.writableEnded) observed.endUnanswered(Number.POSITIVE_INFINITY);
    else observed.end(Code.OK, undefined);
    writer.end();
  } catch (error) {
    const status = callStatusOf(error, observed);
    if (!writer.started) {
      fail(res, codec, observed, status, ctx.responseHeaders);
    } else {
      observed.end(status.code, status.message);
      writer.endWithError(JSON.stringify(codec.failure(status).body));
    }
  } finally {
    ctx.end(CALL_ENDED);
  }
}

function fail(res: ServerResponse, codec: RestCodec, observed: ObservedCall, status: ErrorStatus, headers: Record<string, string> = {}): void {
  observed.end(status.code, status.message);
  send(res, codec, codec.failure(status), headers);
}

function send(res: ServerResponse, codec: RestCodec, failure: RestFailure<object>, headers: Record<string, string> = {}): void {
  sendJson(res, codec.contentType, failure.httpStatus, failure.body as unknown as JsonValue, { ...headers, ...failure.headers });
}

/** Every answer is per caller (tasks, lists, configs, the extended card): never cached (R-HTTP-19). */
function sendJson(res: ServerResponse, contentType: string, status: number, body: JsonValue, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  res.writeHead(status, { ...headers, "Content-Type": contentType, "Cache-Control": "no-store", "Content-Length": bytes.length });
  res.end(bytes);
}

/** A request that declares a body (a GET or DELETE without one needs no Content-Type). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** The path as shown in an error: cut short, so an error never echoes unbounded input. */
function shownPath(path: string): string {
  return JSON.stringify(path.length > 80 ? `${path.slice(0, 80)}…` : path);
}
