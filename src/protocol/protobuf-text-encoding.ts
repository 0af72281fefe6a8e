import { TextDecoder, TextEncoder } from "node:util";
import { configureTextEncoding } from "@bufbuild/protobuf/wire";

/**
 * protobuf-es turns every string field to and from UTF-8 through TextEncoder/TextDecoder
 * (and checks strings with encodeURIComponent): a call into the runtime per string, which
 * dominates encoding a task (ids, context ids, short texts). Short ASCII strings, the common
 * case here, are converted in plain JavaScript instead; anything else goes the standard way,
 * so the bytes and strings are exactly what the standard API gives.
 */

/** Above this length the runtime's bulk conversion is as fast as the loop. */
const SHORT = 64;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
let strictDecoder: TextDecoder | undefined;

export function encodeUtf8(text: string): Uint8Array<ArrayBuffer> {
  const n = text.length;
  if (n > SHORT) return standardEncode(text);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return standardEncode(text);
    out[i] = c;
  }
  return out;
}

/** TextEncoder always returns a fresh array over its own (non-shared) ArrayBuffer. */
function standardEncode(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text) as Uint8Array<ArrayBuffer>;
}

export function decodeUtf8(bytes: Uint8Array, strict?: boolean): string {
  const n = bytes.length;
  if (n <= SHORT) {
    let ascii = true;
    for (let i = 0; i < n; i++) {
      if (bytes[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    // ASCII bytes are valid UTF-8 and decode to the same code units.
    if (ascii) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  }
  if (!strict) return decoder.decode(bytes);
  strictDecoder ??= new TextDecoder("utf-8", { fatal: true });
  return strictDecoder.decode(bytes);
}

/** True when `text` has a UTF-8 form (no lone surrogate): what protobuf-es checks before encoding. */
export function checkUtf8(text: string): boolean {
  const n = text.length;
  if (n <= SHORT) {
    let ascii = true;
    for (let i = 0; i < n; i++) {
      if (text.charCodeAt(i) >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return true;
  }
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** Makes protobuf-es use the conversions above, process-wide (they give the same results as its defaults). */
export function installProtobufTextEncoding(): void {
  configureTextEncoding({ encodeUtf8, decodeUtf8, checkUtf8 });
}
