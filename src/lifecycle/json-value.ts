import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { NullValue, type ListValue, type Struct, type Value } from "@bufbuild/protobuf/wkt";
import { AgentMisuseError } from "./agent-misuse.js";

/**
 * Plain JSON from an agent to google.protobuf.Value (ruling A-27), and the check that a
 * JsonObject (a Struct field such as metadata) can be sent at all. What JSON cannot hold
 * is refused with the path of the offending value, never sent as an empty value: a function,
 * a symbol, a BigInt, NaN or ±Infinity, undefined in an array, a cycle, an object that is not
 * a plain object or array (Date, Map, a class instance, bytes). An undefined property of an
 * object is left out, as JSON.stringify leaves it out.
 */

/** Deeper than this is refused: it would overflow the stack here, and many clients refuse it when decoding. */
export const MAX_JSON_DEPTH = 100;

export class UnrepresentableJsonError extends AgentMisuseError {
  override name = "UnrepresentableJsonError";
  constructor(readonly path: string, problem: string) {
    super(`${path}: ${problem}`);
  }
}

/** `input` as a Value; `path` names it in errors ("parts[1].data"). */
export function jsonToValue(input: unknown, path: string): Value {
  return toValue(input, path, []);
}

/** Throws UnrepresentableJsonError unless `input` is a JSON object that can be sent as a Struct. */
export function checkJsonObject(input: unknown, path: string): asserts input is JsonObject {
  if (!isPlainObject(input)) throw new UnrepresentableJsonError(path, `must be a plain JSON object, not ${describe(input)}`);
  toValue(input, path, []);
}

function toValue(input: unknown, path: string, parents: object[]): Value {
  switch (typeof input) {
    case "string":
      return value({ case: "stringValue", value: input });
    case "boolean":
      return value({ case: "boolValue", value: input });
    case "number":
      if (!Number.isFinite(input)) throw new UnrepresentableJsonError(path, `${input} is not a JSON number`);
      return value({ case: "numberValue", value: input });
    case "object":
      if (input === null) return value({ case: "nullValue", value: NullValue.NULL_VALUE });
      return objectValue(input, path, parents);
    case "bigint":
      throw new UnrepresentableJsonError(path, "a BigInt is not a JSON number; send a number or a string");
    default:
      throw new UnrepresentableJsonError(path, `${describe(input)} cannot be sent as JSON`);
  }
}

function objectValue(input: object, path: string, parents: object[]): Value {
  if (parents.includes(input)) throw new UnrepresentableJsonError(path, "is a cycle: it contains itself");
  if (parents.length >= MAX_JSON_DEPTH) throw new UnrepresentableJsonError(path, `nests deeper than ${MAX_JSON_DEPTH} levels`);
  parents.push(input);
  try {
    if (Array.isArray(input)) return value({ case: "listValue", value: listOf(input, path, parents) });
    if (!isPlainObject(input)) throw new UnrepresentableJsonError(path, `${describe(input)} is not a plain JSON object`);
    return value({ case: "structValue", value: structOf(input as Record<string, unknown>, path, parents) });
  } finally {
    parents.pop();
  }
}

function listOf(input: readonly unknown[], path: string, parents: object[]): ListValue {
  const values: Value[] = [];
  for (let i = 0; i < input.length; i++) {
    // A hole or undefined: JSON.stringify would send null, which is not what the agent wrote.
    if (input[i] === undefined) throw new UnrepresentableJsonError(`${path}[${i}]`, "undefined (or a hole) in an array cannot be sent as JSON; use null");
    values.push(toValue(input[i], `${path}[${i}]`, parents));
  }
  return { $typeName: "google.protobuf.ListValue", values };
}

function structOf(input: Record<string, unknown>, path: string, parents: object[]): Struct {
  if (Object.getOwnPropertySymbols(input).length > 0) throw new UnrepresentableJsonError(path, "has a symbol key, which JSON cannot hold");
  const fields: Record<string, Value> = {};
  for (const key of Object.keys(input)) {
    const item = input[key];
    if (item === undefined) continue; // left out, as JSON.stringify leaves it out
    fields[key] = toValue(item, `${path}${propertyPath(key)}`, parents);
  }
  return { $typeName: "google.protobuf.Struct", fields };
}

function value(kind: Value["kind"]): Value {
  return { $typeName: "google.protobuf.Value", kind };
}

function isPlainObject(input: unknown): input is Record<string, JsonValue> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  const proto = Object.getPrototypeOf(input);
  return proto === Object.prototype || proto === null;
}

/** `.name` for identifier-like keys, else `["odd key"]`. */
function propertyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}]`;
}

function describe(input: unknown): string {
  if (input === null) return "null";
  if (typeof input === "function") return "a function";
  if (typeof input === "symbol") return "a symbol";
  if (typeof input === "undefined") return "undefined";
  if (typeof input !== "object") return `a ${typeof input}`;
  if (Array.isArray(input)) return "an array";
  const name = (Object.getPrototypeOf(input) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name ? `a ${name}` : "an object";
}
