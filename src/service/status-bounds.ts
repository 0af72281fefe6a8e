/**
 * Bounds on what an error status carries: a status travels in the HTTP/2 trailers, and a
 * trailer block beyond what the peer accepts never reaches the client and stalls the connection.
 * So no status echoes unbounded input: its message is at most 1 KiB, an ErrorInfo value at most
 * 256 characters, a BadRequest at most 32 violations (the last saying how many more there were),
 * each field path and description cut short, the whole list within about 2 KiB.
 */
import type { FieldViolation } from "../lifecycle/index.js";

export const MAX_STATUS_MESSAGE_BYTES = 1024;
export const MAX_METADATA_VALUE_CHARS = 256;
export const MAX_VIOLATIONS = 32;
const MAX_FIELD_CHARS = 128;
const MAX_DESCRIPTION_CHARS = 240;
const VIOLATIONS_BUDGET_BYTES = 2048;

/** `text` cut to at most `maxBytes` of UTF-8 (on a character boundary), with "…" when cut. */
export function boundText(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text; // the usual message: no measuring
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  let end = Math.min(text.length, maxBytes - 3);
  while (end > 0 && Buffer.byteLength(text.slice(0, end), "utf8") > maxBytes - 3) end = Math.floor(end * 0.9);
  // Do not split a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

function cutChars(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function boundMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  let n = 0;
  for (const [key, value] of Object.entries(metadata)) {
    if (++n > 16) break;
    out[cutChars(key, 64)] = cutChars(value, MAX_METADATA_VALUE_CHARS);
  }
  return out;
}

/** At most MAX_VIOLATIONS entries within the byte budget; when some are left out, the last entry says how many. */
export function boundViolations(violations: readonly FieldViolation[], omitted = 0): FieldViolation[] {
  const out: FieldViolation[] = [];
  let bytes = 0;
  for (let i = 0; i < violations.length; i++) {
    const v = { field: cutChars(violations[i]!.field, MAX_FIELD_CHARS), description: cutChars(violations[i]!.description, MAX_DESCRIPTION_CHARS) };
    const size = v.field.length + v.description.length + 8;
    if (out.length === MAX_VIOLATIONS - 1 && i < violations.length - 1) break;
    if (bytes + size > VIOLATIONS_BUDGET_BYTES) break;
    bytes += size;
    out.push(v);
  }
  const more = violations.length - out.length + omitted;
  if (more > 0) out.push({ field: "", description: `and ${more} more violation${more === 1 ? "" : "s"} not listed; fix these first` });
  return out;
}
