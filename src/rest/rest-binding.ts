import type { IncomingMessage, ServerResponse } from "node:http";
import type { DescMethod, JsonValue, Message } from "@bufbuild/protobuf";
import { requestMetadata } from "../http/header-metadata.js";
import { admitFromHeaders, failCall, readBoundedBody, refusalBeforeRun, runSseStream, runUnary } from "../http/http-call.js";
import type { FailureWriter, HttpCallOptions, SseStreamWire, UnaryWire } from "../http/http-call.js";
import { HttpCallContext, callStatusOf, peerOf } from "../http/http-call-context.js";
import type { SseEvent } from "../http/sse-writer.js";
import type { ErrorStatus } from "../service/error-status.js";
import type { ServerStreamHandler, UnaryHandler } from "../service/face.js";
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

export interface RestBindingOptions extends HttpCallOptions {
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
  const writeFailure = failureWriter(res, codec);
  const observe = () => options.observers.begin(options.serviceName, method.name, streaming, peerOf(req), metadata, "rest");
  const heads = { metadata, protocolVersion: options.protocolVersion, observeRefused: observe };
  if (!(await admitFromHeaders(req, options, heads, writeFailure))) return;
  const body = await readBoundedBody(req, res, options.maxBodyBytes, (message) => send(res, codec, codec.transportFailure(413, message)));
  if (body === undefined) return;
  const observed = observe();
  const handler = options.handlers()[method.name];
  const refusal = refusalBeforeRun(options.closing(), handler, `${method.name} is not implemented`);
  if (refusal !== undefined) return failCall(observed, refusal, writeFailure);
  let request: Message;
  try {
    request = codec.decodeRequest(route, match.variables, new URLSearchParams(queryAt < 0 ? "" : url.slice(queryAt + 1)), body);
  } catch (error) {
    return failCall(observed, callStatusOf(error, observed), writeFailure);
  }
  const ctx = new HttpCallContext(method.name, metadata, observed, req, res);
  if (streaming) {
    // R-HTTP-13..17: each event the codec's JSON of one stream message; the error event, its error body.
    const wire: SseStreamWire<Message> = {
      encode: (response) => codec.streamEvent(response),
      errorEventData: (status) => JSON.stringify(codec.failure(status).body),
      keepAliveMs: options.sseKeepAliveMs,
    };
    return runSseStream(ctx, res, options.observers, wire, writeFailure, (writer) => (handler as ServerStreamHandler<Message, Message>)(request, ctx, writer));
  }
  const unary: UnaryWire<Message> = {
    call: () => (handler as UnaryHandler<Message, Message>)(request, ctx),
    encode: (response) => codec.responseJson(method, request, response),
    writeResult: (result, responseHeaders) => sendJson(res, codec.contentType, 200, result, responseHeaders),
  };
  return runUnary(ctx, res, options.observers, unary, writeFailure);
}

/** The codec's error response of a failure the face reported. */
function failureWriter(res: ServerResponse, codec: RestCodec): FailureWriter {
  return (status, headers) => send(res, codec, codec.failure(status), headers);
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
