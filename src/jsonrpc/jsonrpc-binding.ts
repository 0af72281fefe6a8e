import type { IncomingMessage, ServerResponse } from "node:http";
import { toJson, type JsonValue, type Message } from "@bufbuild/protobuf";
import { StreamResponseSchema, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { requestMetadata } from "../http/header-metadata.js";
import { admitFromHeaders, failCall, readBoundedBody, refusalBeforeRun, runSseStream, runUnary } from "../http/http-call.js";
import type { FailureWriter, HttpCallOptions, SseStreamWire, UnaryWire } from "../http/http-call.js";
import { HttpCallContext, callStatusOf, peerOf } from "../http/http-call-context.js";
import { responseJson } from "../http/proto-json.js";
import { cursorOf } from "../http/stream-cursor.js";
import type { ServerStreamHandler, UnaryHandler } from "../service/face.js";
import { mappedWriter, type DialectMethod, type FaceCall, type JsonRpcDialect, type StreamResult } from "./jsonrpc-dialect.js";
import { METHODS, decodeParams, findV1Method, readEnvelope, type JsonRpcId } from "./jsonrpc-envelope.js";
import { INVALID_REQUEST, envelopeError, jsonRpcFailure, type JsonRpcErrorObject } from "./jsonrpc-errors.js";

/*
 * The JSON-RPC 2.0 binding (§9, R-JRPC-*): one POST per request to the binding's path. Order
 * (R-BIND-8, A-15): HTTP method and content type, then admission (version and credentials from
 * the headers, before a byte of the body is read), then the bounded body, the envelope, the
 * params as the method's request message, and the face's handler, which validates, checks
 * capabilities and scopes the task to its caller exactly as for gRPC. Every call is reported to
 * the same observers as gRPC's (log line, metrics, traces), with binding "jsonrpc". What differs
 * between A2A generations (methods, params, results) is the binding's dialect (jsonrpc-dialect.ts):
 * the 1.0 dialect below, the 0.3 one in v03-jsonrpc-dialect.ts.
 */

export interface JsonRpcBindingOptions extends HttpCallOptions {
  /** The A2A generation the endpoint speaks; default: 1.0 (V1_DIALECT). */
  readonly dialect?: JsonRpcDialect;
}

/** The binding's request handler for its path on the HTTP listener. */
export function createJsonRpcBinding(options: JsonRpcBindingOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const dialect = options.dialect ?? V1_DIALECT;
  // A v0.3 endpoint's own version rule stands in for the binding's 1.0 one.
  const { checkVersion } = dialect;
  const callOptions: HttpCallOptions = checkVersion === undefined ? options : { ...options, checkVersion: (metadata) => checkVersion(metadata) };
  return (req, res) => {
    serve(callOptions, dialect, req, res).catch((error: unknown) => {
      // Unreachable by design (every step answers its own failures); never leave a request hanging.
      if (!res.headersSent) sendRpc(res, 500, { jsonrpc: "2.0", id: null, error: envelopeError(-32603, "Internal error") });
      else res.destroy(error instanceof Error ? error : undefined);
    });
  };
}

async function serve(options: HttpCallOptions, dialect: JsonRpcDialect, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "POST") {
    res.setHeader("Allow", "POST");
    return sendRpc(res, 405, { jsonrpc: "2.0", id: null, error: envelopeError(INVALID_REQUEST, `HTTP method ${req.method} is not allowed: send a POST`) });
  }
  if (!isJson(req.headers["content-type"])) {
    return sendRpc(res, 415, { jsonrpc: "2.0", id: null, error: envelopeError(INVALID_REQUEST, "Content-Type must be application/json") });
  }
  const metadata = requestMetadata(req);
  // Refused before the body was read: no method is known, no id can be echoed (R-JRPC-4).
  const observeRefused = () => options.observers.begin(dialect.service, "(unread)", false, peerOf(req), metadata, "jsonrpc");
  const heads = { metadata, protocolVersion: dialect.protocolVersion, observeRefused };
  if (!(await admitFromHeaders(req, options, heads, failureWriter(res, null)))) return;
  const tooLarge = (message: string) => sendRpc(res, 413, { jsonrpc: "2.0", id: null, error: envelopeError(INVALID_REQUEST, message) });
  const body = await readBoundedBody(req, res, options.maxBodyBytes, tooLarge);
  if (body === undefined) return;
  const call = readEnvelope(body, (name) => dialect.method(name));
  if ("error" in call) return sendRpc(res, 200, { jsonrpc: "2.0", id: call.id, error: call.error });
  const { id, method } = call;
  const writeFailure = failureWriter(res, id);
  const observed = options.observers.begin(dialect.service, method.rpc, method.streaming, peerOf(req), metadata, "jsonrpc");
  const handlers = options.handlers();
  const refusal = refusalBeforeRun(options.closing(), handlers[method.rpc], `method ${method.rpc} is not implemented`);
  if (refusal !== undefined) return failCall(observed, refusal, writeFailure);
  let request: Message;
  try {
    request = method.decode(call.params);
  } catch (error) {
    return failCall(observed, callStatusOf(error, observed), writeFailure);
  }
  const ctx = new HttpCallContext(method.rpc, metadata, observed, req, res);
  const face: FaceCall = { handlers, context: dialect.context(ctx) };
  if (method.streaming) {
    // R-JRPC-12..15: each event a JSON-RPC response with the request's id; its SSE `id:` is its
    // resume cursor when the stream-resume extension is active, for Last-Event-ID.
    const wire: SseStreamWire<StreamResult> = {
      encode: (event) => ({ id: event.cursor, data: JSON.stringify({ jsonrpc: "2.0", id, result: event.result }) }),
      errorEventData: (status) => JSON.stringify({ jsonrpc: "2.0", id, error: jsonRpcFailure(status).error }),
      keepAliveMs: options.sseKeepAliveMs,
    };
    return runSseStream(ctx, res, options.observers, wire, writeFailure, (writer) => method.stream(face, request, writer));
  }
  // The method's invoke encodes its result itself, inside the call's scope.
  const unary: UnaryWire<JsonValue> = {
    call: () => method.invoke(face, request),
    encode: (result) => result,
    writeResult: (result, responseHeaders) => sendRpc(res, 200, { jsonrpc: "2.0", id, result }, responseHeaders),
  };
  return runUnary(ctx, res, options.observers, unary, writeFailure);
}

/**
 * The 1.0 dialect: ProtoJSON of lf.a2a.v1, PascalCase methods (R-JRPC-7), results wrapped as the
 * proto says (R-JRPC-8). `v03Path`: the v0.3 endpoint a v0.3 method name is sent to.
 */
export function v1Dialect(v03Path: string | null): JsonRpcDialect {
  return {
    service: "lf.a2a.v1.A2AService",
    method(name) {
      const found = findV1Method(name);
      if (typeof found !== "string") return V1_METHODS.get(found.name)!;
      return v03Path !== null && name.includes("/") ? `${found}; A2A v0.3 clients send it to ${v03Path}` : found;
    },
    context: (call) => call,
  };
}

const V1_DIALECT = v1Dialect(null);

const V1_METHODS: ReadonlyMap<string, DialectMethod> = new Map(
  [...METHODS.values()].map((method) => [
    method.name,
    {
      rpc: method.name,
      streaming: method.methodKind === "server_streaming",
      decode: (params) => decodeParams(method.input, params),
      async invoke(face, request) {
        const response = await (face.handlers[method.name] as UnaryHandler<Message, Message>)(request, face.context);
        return responseJson(method, request, response);
      },
      stream(face, request, out) {
        const events = mappedWriter(out, (event: StreamResponse): StreamResult => ({ result: toJson(StreamResponseSchema, event), cursor: cursorOf(event) }));
        return (face.handlers[method.name] as ServerStreamHandler<Message, StreamResponse>)(request, face.context, events);
      },
    },
  ]),
);

/** The JSON-RPC error response of a failure the face reported, echoing the request's id. */
function failureWriter(res: ServerResponse, id: JsonRpcId): FailureWriter {
  return (status, headers) => {
    const { error, httpStatus } = jsonRpcFailure(status);
    sendRpc(res, httpStatus, { jsonrpc: "2.0", id, error }, headers);
  };
}

type JsonRpcResponse = { jsonrpc: "2.0"; id: JsonRpcId; result: JsonValue } | { jsonrpc: "2.0"; id: JsonRpcId; error: JsonRpcErrorObject };

function sendRpc(res: ServerResponse, status: number, response: JsonRpcResponse, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(JSON.stringify(response), "utf8");
  res.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": body.length });
  res.end(body);
}

/** R-JRPC-2: application/json (any parameters, e.g. charset=utf-8); a missing Content-Type is tolerated. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  return contentType.split(";", 1)[0]!.trim().toLowerCase() === "application/json";
}
