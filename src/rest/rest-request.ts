import { fromJson, ScalarType, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { decodeJsonMessage } from "../http/proto-json.js";
import { InvalidRequestError } from "../lifecycle/index.js";
import type { HttpRoute } from "./http-rule-router.js";

/*
 * A REST request as the RPC's input message, by the google.api.http transcoding rules
 * (R-HTTP-4..6): path variables set the fields they name; with `body: "*"` every other field
 * comes from the JSON body; otherwise the body (if the rule names a field) fills that field and
 * the rest come from query parameters. Field names in errors are the proto names (BQ-10).
 */

/** Query parameters that are service parameters, never request fields (R-BIND-11). */
const SERVICE_PARAMETERS = new Set(["A2A-Version"]);

export function decodeRestRequest(route: HttpRoute, variables: Readonly<Record<string, string>>, query: URLSearchParams, body: Buffer): Message {
  const schema = route.method.input;
  const json: { [key: string]: JsonValue } = {};
  if (route.body === "*") {
    Object.assign(json, parseBody(body));
  } else {
    if (route.body !== "") json[fieldNamed(schema, route.body).jsonName] = parseBody(body);
    Object.assign(json, queryFields(schema, query));
  }
  for (const [name, value] of Object.entries(variables)) bindPathField(schema, json, fieldNamed(schema, name), value);
  return decodeJsonMessage(schema, json, "body");
}

/** The body's JSON object; an empty body is `{}` (R-HTTP-4). */
function parseBody(body: Buffer): { [key: string]: JsonValue } {
  const text = body.toString("utf8");
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw InvalidRequestError.field("body", "is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw InvalidRequestError.field("body", "must be a JSON object");
  return parsed as { [key: string]: JsonValue };
}

/**
 * A path variable into the request (R-HTTP-2/3). A body that names the same field with another
 * value is refused (BQ-13) rather than silently overridden: the client meant something else.
 */
function bindPathField(schema: DescMessage, json: { [key: string]: JsonValue }, field: DescField, value: string): void {
  for (const key of new Set([field.jsonName, field.name])) {
    if (!(key in json)) continue;
    const given = json[key];
    if (given !== null && given !== value)
      throw InvalidRequestError.field(field.name, `is ${describePathField(schema, field)} in the path and differs in the request; send it once`);
    delete json[key];
  }
  json[field.jsonName] = value;
}

function describePathField(schema: DescMessage, field: DescField): string {
  return `${schema.name}.${field.name}`;
}

function fieldNamed(schema: DescMessage, name: string): DescField {
  const field = schema.fields.find((f) => f.name === name);
  if (field === undefined) throw new Error(`${schema.typeName} has no field ${name}`); // checked at start-up
  return field;
}

/**
 * The query parameters as ProtoJSON fields (R-HTTP-5/6): named by json name or proto name,
 * values in §11.5's forms, each checked on its own so a malformed one is refused naming its
 * field. Unknown parameters are ignored (R-BIND-23); nested messages never travel in a query.
 */
function queryFields(schema: DescMessage, query: URLSearchParams): { [key: string]: JsonValue } {
  const json: { [key: string]: JsonValue } = {};
  for (const key of new Set(query.keys())) {
    if (SERVICE_PARAMETERS.has(key)) continue;
    const field = schema.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) continue;
    if (field.jsonName in json) throw InvalidRequestError.field(field.name, "is given twice (by its json and its proto name)");
    const values = query.getAll(key);
    if (field.fieldKind === "list") {
      json[field.jsonName] = values.map((v) => queryValue(field, v));
    } else {
      if (values.length > 1) throw InvalidRequestError.field(field.name, "is given more than once; it takes one value");
      json[field.jsonName] = queryValue(field, values[0]!);
    }
    try {
      fromJson(schema, { [field.jsonName]: json[field.jsonName]! });
    } catch {
      throw InvalidRequestError.field(field.name, `is not a valid ${expected(field)}`);
    }
  }
  return json;
}

/** One query value as the ProtoJSON value of its field. */
function queryValue(field: DescField, value: string): JsonValue {
  const refuse = () => InvalidRequestError.field(field.name, `is not a valid ${expected(field)}`);
  if (field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum")) {
    const known = field.enum!.values.some((v) => v.name === value);
    if (!known) throw refuse(); // R-BIND-22: an unknown enum name is never "no filter"
    return value;
  }
  const scalar = field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar") ? field.scalar : undefined;
  if (scalar === undefined) {
    if (field.fieldKind === "message" && field.message.typeName === "google.protobuf.Timestamp") return value;
    throw InvalidRequestError.field(field.name, "cannot be sent as a query parameter: send it in a request body");
  }
  switch (scalar) {
    case ScalarType.BOOL:
      if (value !== "true" && value !== "false") throw refuse();
      return value === "true";
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      if (!/^-?\d{1,10}$/.test(value)) throw refuse();
      return Number(value);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (value.trim() === "" || !Number.isFinite(Number(value))) throw refuse();
      return Number(value);
    default:
      return value; // strings, bytes (base64) and 64-bit integers travel as JSON strings
  }
}

/** What a field's value must be, for the error (never the value itself). */
function expected(field: DescField): string {
  if (field.fieldKind === "enum") return `${field.enum.name} name (e.g. ${field.enum.values[1]?.name ?? field.enum.values[0]?.name})`;
  if (field.fieldKind === "message") return "RFC 3339 timestamp (e.g. 2025-11-09T10:30:00Z)";
  if (field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL) return "boolean (true or false)";
  if (field.fieldKind === "scalar" && field.scalar !== ScalarType.STRING && field.scalar !== ScalarType.BYTES) return "number";
  return "value";
}
