import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { InvalidRequestError } from "../../lifecycle/index.js";

/*
 * Typed reads of the v0.3 JSON model: each read names the field's path in the -32602 it throws
 * (BadRequest field, R-V03-11), and never repeats the value it refused.
 */

export type JsonFields = { readonly [key: string]: JsonValue | undefined };

/** Throws -32602 naming `path`. */
export function invalid(path: string, problem: string): never {
  throw InvalidRequestError.field(path, problem);
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` as a JSON object, or -32602. */
export function objectAt(value: JsonValue | undefined, path: string): JsonFields {
  if (!isObject(value)) invalid(path, "must be a JSON object");
  return value;
}

/** An optional field: JSON null counts as absent (R-BIND-28). */
function present(fields: JsonFields, key: string): JsonValue | undefined {
  const value = fields[key];
  return value === null ? undefined : value;
}

export function optionalString(fields: JsonFields, key: string, path: string): string | undefined {
  const value = present(fields, key);
  if (value === undefined) return undefined;
  if (typeof value !== "string") invalid(join(path, key), "must be a string");
  return value;
}

export function requiredString(fields: JsonFields, key: string, path: string): string {
  const value = optionalString(fields, key, path);
  if (value === undefined) invalid(join(path, key), "is required");
  return value;
}

export function optionalBoolean(fields: JsonFields, key: string, path: string): boolean | undefined {
  const value = present(fields, key);
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") invalid(join(path, key), "must be true or false");
  return value;
}

/** A non-negative integer (or its decimal string, as ProtoJSON allows, R-BIND-30). */
export function optionalCount(fields: JsonFields, key: string, path: string): number | undefined {
  const value = present(fields, key);
  if (value === undefined) return undefined;
  const number = typeof value === "string" && /^\d{1,10}$/.test(value) ? Number(value) : value;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 0 || number > 2147483647) {
    invalid(join(path, key), "must be a non-negative integer");
  }
  return number;
}

export function optionalStrings(fields: JsonFields, key: string, path: string): string[] {
  const value = present(fields, key);
  if (value === undefined) return [];
  if (!Array.isArray(value)) invalid(join(path, key), "must be an array of strings");
  return value.map((item, index) => {
    if (typeof item !== "string") invalid(`${join(path, key)}[${index}]`, "must be a string");
    return item;
  });
}

export function optionalObject(fields: JsonFields, key: string, path: string): JsonObject | undefined {
  const value = present(fields, key);
  if (value === undefined) return undefined;
  return objectAt(value, join(path, key)) as JsonObject;
}

/** "message" + "parts" → "message.parts"; "" + "id" → "id". */
export function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}
