/**
 * Checks shared by the request validators. Each adds at most one violation per field and
 * phrases it as what the client should send instead.
 */
import type { JsonValue } from "@bufbuild/protobuf";
import type { Timestamp, Value } from "@bufbuild/protobuf/wkt";
import type { ValidationLimits } from "./validation-limits.js";
import type { Violations } from "./violations.js";

// C0, DEL and C1: never meaningful in ids, and dangerous in logs and HTTP headers.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

// RFC 6838 restricted names; parameters (";charset=utf-8") are allowed but not parsed.
const NAME = "[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}";
const MEDIA_TYPE = new RegExp(`^${NAME}/${NAME}(\\s*;.*)?$`);
const MEDIA_RANGE = new RegExp(`^(\\*/\\*|${NAME}/\\*|${NAME}/${NAME})(\\s*;.*)?$`);

// The range google.protobuf.Timestamp allows: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z.
const MIN_TIMESTAMP_SECONDS = -62_135_596_800n;
const MAX_TIMESTAMP_SECONDS = 253_402_300_799n;

export function hasControlChars(value: string): boolean {
  return CONTROL_CHARS.test(value);
}

/**
 * An identifier: bounded length, no control characters; `required` (the sentence after
 * "must be set: ") makes the empty string a violation too.
 */
export function checkId(v: Violations, field: string, value: string, limits: ValidationLimits, required?: string): void {
  if (value === "") {
    if (required !== undefined) v.add(field, `must be set: ${required}`);
    return;
  }
  if (value.length > limits.maxIdLength) {
    v.add(field, `must be at most ${limits.maxIdLength} characters long (got ${value.length})`);
  } else if (hasControlChars(value)) {
    v.add(field, "must not contain control characters (such as newlines or NUL)");
  }
}

/** R-HIST-4: history_length is optional; when set it must not be negative. */
export function checkHistoryLength(v: Violations, field: string, value: number | undefined): void {
  if (value !== undefined && value < 0) {
    v.add(field, `must be 0 or more (0 = no history, unset = the server's default); got ${value}`);
  }
}

/** Free text that ends up in logs or HTTP headers (filenames, tokens, credentials). */
export function checkNoControlChars(v: Violations, field: string, value: string): void {
  if (hasControlChars(value)) v.add(field, "must not contain control characters (such as newlines or NUL)");
}

function parseUrl(value: string): URL | undefined {
  // The WHATWG parser silently drops tabs and newlines; a URL containing them is not the one we would use.
  if (hasControlChars(value)) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** A file reference in a part: any absolute URL (fetching it is checked elsewhere, R-SEC-5). */
export function checkAbsoluteUrl(v: Violations, field: string, value: string): void {
  if (value === "") {
    v.add(field, "must be set: an absolute URL of the file, such as https://example.com/report.pdf");
  } else if (parseUrl(value) === undefined) {
    v.add(field, "must be an absolute URL with a scheme, such as https://example.com/report.pdf");
  }
}

/** A push webhook: an absolute http(s) URL with a host (A-8). */
export function checkWebhookUrl(v: Violations, field: string, value: string): void {
  const example = "such as https://client.example/a2a/notifications";
  if (value === "") {
    v.add(field, `must be set: the absolute http(s) URL of your webhook, ${example}`);
    return;
  }
  const url = parseUrl(value);
  if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") {
    v.add(field, `must be an absolute http or https URL, ${example}`);
  }
}

/** A concrete media type (`type/subtype`, optional parameters). */
export function checkMediaType(v: Violations, field: string, value: string): void {
  if (value !== "" && (!MEDIA_TYPE.test(value) || hasControlChars(value))) {
    v.add(field, `must be a media type of the form type/subtype, such as text/plain or application/pdf; got ${JSON.stringify(value)}`);
  }
}

/** A media range as a client may accept it: `type/subtype`, `type/*` or `*\/*`. */
export function checkMediaRange(v: Violations, field: string, value: string): void {
  if (!MEDIA_RANGE.test(value) || hasControlChars(value)) {
    v.add(field, `must be a media type such as text/plain, image/* or */*; got ${JSON.stringify(value)}`);
  }
}

/** A Timestamp the wire can carry but ProtoJSON and dates cannot: reject it at the edge. */
export function checkTimestamp(v: Violations, field: string, ts: Timestamp): void {
  if (ts.seconds < MIN_TIMESTAMP_SECONDS || ts.seconds > MAX_TIMESTAMP_SECONDS) {
    v.add(`${field}.seconds`, "must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z");
  }
  if (ts.nanos < 0 || ts.nanos > 999_999_999) {
    v.add(`${field}.nanos`, `must be between 0 and 999999999; got ${ts.nanos}`);
  }
}

function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Struct and list bounds (R-SEC-5): the violation names the path of the Struct or list over them. */
export type StructBounds = Pick<ValidationLimits, "maxStructEntries" | "maxStructDepth">;

function checkStructShape(v: Violations, path: string, entries: number, depth: number, bounds: StructBounds): boolean {
  if (entries > bounds.maxStructEntries) {
    v.add(path, `must have at most ${bounds.maxStructEntries} entries (got ${entries})`);
    return false;
  }
  if (entries > 0 && depth > bounds.maxStructDepth) {
    v.add(path, `must nest at most ${bounds.maxStructDepth} levels of objects and lists`);
    return false;
  }
  return true;
}

/**
 * A google.protobuf.Value must hold a JSON value all the way down: the binary wire allows a
 * Value with no kind, or NaN/Infinity, which ProtoJSON (push bodies, storage) cannot express.
 * Reports the first bad spot only. Iterative, so hostile nesting cannot overflow the stack.
 */
export function checkJsonValue(v: Violations, field: string, value: Value, bounds: StructBounds): void {
  const stack: Array<[string, Value, number]> = [[field, value, 1]];
  while (stack.length > 0) {
    const [path, item, depth] = stack.pop()!;
    const kind = item.kind;
    let problem: string | undefined;
    switch (kind.case) {
      case undefined:
        problem = "has no value; set one of null, number, string, bool, struct or list";
        break;
      case "numberValue":
        if (!Number.isFinite(kind.value)) problem = "must be a finite number (JSON has no NaN or Infinity)";
        break;
      case "structValue": {
        const entries = Object.entries(kind.value.fields);
        if (!checkStructShape(v, path, entries.length, depth, bounds)) return;
        for (const [key, child] of entries) stack.push([childPath(path, key), child, depth + 1]);
        break;
      }
      case "listValue":
        if (!checkStructShape(v, path, kind.value.values.length, depth, bounds)) return;
        kind.value.values.forEach((child, i) => stack.push([childPath(path, i), child, depth + 1]));
        break;
      default:
        break;
    }
    if (problem !== undefined) {
      const where = path === field ? "it" : `the entry at ${path.slice(field.length)}`;
      v.add(field, `must hold a JSON value: ${where} ${problem}`);
      return;
    }
  }
}

/**
 * Struct fields arrive as plain JSON objects: non-finite numbers, and objects or lists over the
 * bounds, can be wrong there. Reports the first bad spot only.
 */
export function checkJsonObject(v: Violations, field: string, value: JsonValue | undefined, bounds: StructBounds): void {
  if (value === undefined) return;
  const stack: Array<[string, JsonValue, number]> = [[field, value, 1]];
  while (stack.length > 0) {
    const [path, item, depth] = stack.pop()!;
    if (typeof item === "number" && !Number.isFinite(item)) {
      v.add(field, `must be JSON: ${path} must be a finite number (JSON has no NaN or Infinity)`);
      return;
    }
    if (Array.isArray(item)) {
      if (!checkStructShape(v, path, item.length, depth, bounds)) return;
      item.forEach((child, i) => stack.push([childPath(path, i), child, depth + 1]));
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item);
      if (!checkStructShape(v, path, entries.length, depth, bounds)) return;
      for (const [key, child] of entries) stack.push([childPath(path, key), child, depth + 1]);
    }
  }
}
