import type { DescMessage, DescMethod, JsonValue, Message } from "@bufbuild/protobuf";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { decodeJsonMessage } from "../http/proto-json.js";
import { INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, envelopeError, type JsonRpcErrorObject } from "./jsonrpc-errors.js";

/** A JSON-RPC request id: a string, a number or null (R-JRPC-3); echoed as received (R-JRPC-4). */
export type JsonRpcId = string | number | null;

/** The service's methods by their v1.0 names (R-JRPC-7), read from the generated descriptor. */
export const METHODS: ReadonlyMap<string, DescMethod> = new Map(A2AService.methods.map((method) => [method.name, method]));

/** A request that passed the envelope rules: its id, method and still-undecoded params. */
export interface JsonRpcCall<M = DescMethod> {
  readonly id: JsonRpcId;
  readonly method: M;
  readonly params: JsonValue;
}

/** A request refused by the envelope rules, with the id to answer with (null when none could be read). */
export interface EnvelopeRefusal {
  readonly id: JsonRpcId;
  readonly error: JsonRpcErrorObject;
}

/**
 * The body as a JSON-RPC call, or why not: -32700, -32600 or -32601 (R-JRPC-3..10). `find` gives
 * the method of a name, or the -32601 message (default: the v1.0 methods).
 */
export function readEnvelope<M = DescMethod>(
  body: Buffer,
  find: (name: string) => M | string = findV1Method as (name: string) => M | string,
): JsonRpcCall<M> | EnvelopeRefusal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return { id: null, error: envelopeError(PARSE_ERROR, "Invalid JSON payload") };
  }
  if (Array.isArray(parsed)) return { id: null, error: envelopeError(INVALID_REQUEST, "batch requests are not supported: send one request per HTTP POST") };
  if (typeof parsed !== "object" || parsed === null)
    return { id: null, error: envelopeError(INVALID_REQUEST, "the request must be a JSON-RPC 2.0 request object") };
  const request = parsed as Record<string, unknown>;
  if (!("id" in request)) return { id: null, error: envelopeError(INVALID_REQUEST, "notifications (requests without an id) are not supported: send an id") };
  const id = request["id"];
  if (id !== null && typeof id !== "string" && !(typeof id === "number" && Number.isInteger(id))) {
    return { id: null, error: envelopeError(INVALID_REQUEST, "id must be a string, an integer or null") };
  }
  if (request["jsonrpc"] !== "2.0") return { id, error: envelopeError(INVALID_REQUEST, 'jsonrpc must be exactly "2.0"') };
  const name = request["method"];
  if (typeof name !== "string") return { id, error: envelopeError(INVALID_REQUEST, "method must be a string") };
  const method = find(name);
  if (typeof method === "string") return { id, error: envelopeError(METHOD_NOT_FOUND, method) };
  return { id, method, params: (request["params"] ?? {}) as JsonValue };
}

/** A v1.0 method by its name, or the -32601 message. */
export function findV1Method(name: string): DescMethod | string {
  return METHODS.get(name) ?? methodNotFound(name);
}

/** "Method not found", saying so when the name is a v0.3 one ("tasks/get"): this endpoint speaks 1.0. */
function methodNotFound(name: string): string {
  const shown = JSON.stringify(name.slice(0, 64));
  if (!name.includes("/")) return `Method not found: ${shown}`;
  return `Method not found: ${shown} is an A2A v0.3 method name; this endpoint speaks A2A 1.0, whose methods are the gRPC names (SendMessage, GetTask, ...)`;
}

/** The params as the method's request message (R-JRPC-6); throws InvalidRequestError (-32602 with BadRequest). */
export function decodeParams(schema: DescMessage, params: JsonValue): Message {
  return decodeJsonMessage(schema, params, "params");
}
