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
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

/** `input` as a Value; `path` names it in errors ("parts[1].data"). */
export function jsonToValue(input: unknown, path: string): Value {
  return toValue(input, { base: path, parents: [], keys: [] });
}

/** Throws UnrepresentableJsonError unless `input` is a JSON object that can be sent as a Struct. */
export function checkJsonObject(input: unknown, path: string): asserts input is JsonObject {
  if (!isPlainObject(input)) throw new UnrepresentableJsonError(path, `must be a plain JSON object, not ${describe(input)}`);
  toValue(input, { base: path, parents: [], keys: [] });
}

/**
 * Where the walk is: the objects above (for cycles and depth) and the keys that led here.
 * Why keys and not a path string: the path is built only for an error, not for every value.
 */
interface Walk {
  readonly base: string;
  readonly parents: object[];
  readonly keys: Array<string | number>;
}

function refuse(walk: Walk, problem: string): never {
  let path = walk.base;
  for (const key of walk.keys) path += typeof key === "number" ? `[${key}]` : propertyPath(key);
  throw new UnrepresentableJsonError(path, problem);
}

function toValue(input: unknown, walk: Walk): Value {
  switch (typeof input) {
    case "string":
      return value({ case: "stringValue", value: input });
    case "boolean":
      return value({ case: "boolValue", value: input });
    case "number":
      if (!Number.isFinite(input)) refuse(walk, `${input} is not a JSON number`);
      return value({ case: "numberValue", value: input });
    case "object":
      if (input === null) return value({ case: "nullValue", value: NullValue.NULL_VALUE });
      return objectValue(input, walk);
    case "bigint":
      return refuse(walk, "a BigInt is not a JSON number; send a number or a string");
    default:
      return refuse(walk, `${describe(input)} cannot be sent as JSON`);
  }
}

function objectValue(input: object, walk: Walk): Value {
  const { parents } = walk;
  if (parents.includes(input)) refuse(walk, "is a cycle: it contains itself");
  if (parents.length >= MAX_JSON_DEPTH) refuse(walk, `nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (!Array.isArray(input) && !isPlainObject(input)) refuse(walk, `${describe(input)} is not a plain JSON object`);
  parents.push(input);
  const result = Array.isArray(input)
    ? value({ case: "listValue", value: listOf(input, walk) })
    : value({ case: "structValue", value: structOf(input as Record<string, unknown>, walk) });
  parents.pop(); // (after a refusal the walk is abandoned, so no finally is needed)
  return result;
}

function listOf(input: readonly unknown[], walk: Walk): ListValue {
  const values: Value[] = new Array(input.length);
  for (let i = 0; i < input.length; i++) {
    walk.keys.push(i);
    // A hole or undefined: JSON.stringify would send null, which is not what the agent wrote.
    if (input[i] === undefined) refuse(walk, "undefined (or a hole) in an array cannot be sent as JSON; use null");
    values[i] = toValue(input[i], walk);
    walk.keys.pop();
  }
  return { $typeName: "google.protobuf.ListValue", values };
}

function structOf(input: Record<string, unknown>, walk: Walk): Struct {
  if (Object.getOwnPropertySymbols(input).length > 0) refuse(walk, "has a symbol key, which JSON cannot hold");
  const fields: Record<string, Value> = {};
  for (const key of Object.keys(input)) {
    const item = input[key];
    if (item === undefined) continue; // left out, as JSON.stringify leaves it out
    walk.keys.push(key);
    const converted = toValue(item, walk);
    // "__proto__" (JSON.parse makes it an own key) must stay a field, not become the prototype.
    if (key === "__proto__") Object.defineProperty(fields, key, { value: converted, enumerable: true, writable: true, configurable: true });
    else fields[key] = converted;
    walk.keys.pop();
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
