import { fromJson, toJson, type DescMessage, type DescMethod, type JsonValue, type Message } from "@bufbuild/protobuf";
import { ListTaskPushNotificationConfigsResponseSchema, ListTasksResponseSchema, type ListTasksRequest } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { InvalidRequestError } from "../lifecycle/index.js";

/*
 * ProtoJSON in and out for the JSON bindings (JSON-RPC, HTTP+JSON), so both read and print the
 * A2A messages by the same rules.
 */

/**
 * A JSON object as the message `schema` (R-JRPC-6, R-HTTP-4): ProtoJSON through protobuf-es,
 * unknown fields ignored (R-BIND-23) but unknown enum names refused (R-BIND-22): a strict read
 * first, and the lenient one only when the strict read failed on an unknown field. Throws
 * InvalidRequestError naming `field` (the binding's name for the whole object: "params", "body").
 */
export function decodeJsonMessage(schema: DescMessage, json: JsonValue, field: string): Message {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw InvalidRequestError.field(field, "must be a JSON object");
  try {
    return fromJson(schema, json);
  } catch (strictError) {
    if (!/\bis unknown\b/.test(String((strictError as Error).message))) throw InvalidRequestError.field(field, bounded(strictError));
  }
  try {
    return fromJson(schema, json, { ignoreUnknownFields: true });
  } catch (error) {
    throw InvalidRequestError.field(field, bounded(error));
  }
}

/** protobuf-es's message quotes what it could not read (an enum name, a field): cut short, never the unbounded input. */
function bounded(error: unknown): string {
  const text = String((error as Error).message);
  return text.length > MAX_DECODE_MESSAGE ? `${text.slice(0, MAX_DECODE_MESSAGE)}…` : text;
}

const MAX_DECODE_MESSAGE = 160;

/**
 * The ProtoJSON of a method's response. ProtoJSON drops empty lists and strings, but A2A requires
 * a list response's fields always (R-BIND-25): they are put back here.
 */
export function responseJson(method: DescMethod, request: Message, response: Message): JsonValue {
  const json = toJson(method.output, response) as { [key: string]: JsonValue };
  if (method.output.typeName === ListTasksResponseSchema.typeName) {
    json["tasks"] ??= [];
    // includeArtifacts: every task says which artifacts it has, none included.
    if ((request as ListTasksRequest).includeArtifacts === true)
      for (const task of json["tasks"] as Array<{ [key: string]: JsonValue }>) task["artifacts"] ??= [];
    json["nextPageToken"] ??= "";
    json["pageSize"] ??= 0;
    json["totalSize"] ??= 0;
  } else if (method.output.typeName === ListTaskPushNotificationConfigsResponseSchema.typeName) {
    json["configs"] ??= [];
    json["nextPageToken"] ??= "";
  }
  return json;
}
