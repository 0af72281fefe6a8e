import { protoInt64, type UnknownField } from "@bufbuild/protobuf";
import { getTextEncoding } from "@bufbuild/protobuf/wire";

/*
 * The protobuf wire writer behind codec/task-encoder.ts: one shared buffer written in place, and
 * one small function per field kind, each writing exactly what protobuf-es's BinaryWriter writes.
 * An encoding is begin(), the writes, then finish() (or release() when only its length counts).
 */

export const VARINT = 0;
export const I64 = 1;
export const LEN = 2;

export function tag(fieldNo: number, wireType: number): void {
  varint32((fieldNo << 3) | wireType);
}

/** A singular string with implicit presence: "" is not written. */
export function stringField(fieldNo: number, value: string): void {
  if (value === "") return;
  tag(fieldNo, LEN);
  string(value);
}

/** A list item, a oneof member or a map key: always written. */
export function stringItem(fieldNo: number, value: string): void {
  tag(fieldNo, LEN);
  string(value);
}

/** An open enum with implicit presence: 0 is not written, unknown numbers are. */
export function enumField(fieldNo: number, value: number): void {
  if (value === 0) return;
  tag(fieldNo, VARINT);
  int32(value);
}

export function int64Field(fieldNo: number, value: bigint): void {
  if (typeof value === "bigint") {
    if (value === 0n) return;
    if (value > 0n && value <= 0x7fffffffn) {
      tag(fieldNo, VARINT);
      varint32(Number(value));
      return;
    }
  } else if ((value as unknown as number) == 0) {
    return; // protobuf-es also accepts number and string ("0" is zero)
  }
  const { lo, hi } = protoInt64.enc(value);
  tag(fieldNo, VARINT);
  varint64(lo, hi);
}

/** Implicit presence: false is not written. */
export function boolField(fieldNo: number, value: boolean): void {
  if (!value) return;
  tag(fieldNo, VARINT);
  ensure(1);
  buf[pos++] = 1;
}

/** A singular message field: written when not undefined. */
export function messageField<T>(fieldNo: number, value: T | undefined, write: (value: T) => void): void {
  if (value !== undefined) messageItem(fieldNo, value, write);
}

/** A list item, a oneof member or a map value: always written. */
export function messageItem<T>(fieldNo: number, value: T, write: (value: T) => void): void {
  tag(fieldNo, LEN);
  const at = beginLength();
  write(value);
  endLength(at);
}

export function unknownFields(fields: UnknownField[] | undefined): void {
  if (fields == null) return;
  for (const { no, wireType, data } of fields) {
    varint32(((no << 3) | wireType) >>> 0);
    raw(data);
  }
}

// ---- the buffer: written in place in a shared chunk; a large encoding moves to a scratch array ----

const INITIAL_BUFFER = 16 * 1024;
const MAX_KEPT_BUFFER = 1024 * 1024;
/** Up to this many UTF-16 units a string is tried as ASCII in place; its length then fits one byte. */
const SHORT_STRING = 127;

/**
 * The result: an encoding is written straight into a shared 8 KiB chunk and handed out as a view
 * of it (as Node's Buffer pool does), since a fresh ArrayBuffer per call costs about as much as
 * encoding a typical task, and copying out of a scratch array cost a copy and two views per call.
 * One that outgrows what is left of the chunk moves on to the scratch array (at the same
 * offsets, so lengths reserved earlier stay valid): a large one is then copied out to a buffer of
 * its own, a small one into a fresh chunk. A view keeps its chunk alive while referenced;
 * encodings are short-lived here.
 */
const CHUNK = 8 * 1024;
const OWN_BUFFER_FROM = CHUNK / 4;
/** A chunk with less room than this left is replaced before an encoding starts in it. */
const MIN_ROOM = 512;
let chunk = new ArrayBuffer(CHUNK);
let chunkBytes = new Uint8Array(chunk);
let chunkView = new DataView(chunk);
let chunkUsed = 0;
let scratch = new Uint8Array(INITIAL_BUFFER);

/** Where the encoding in progress is written: the chunk or the scratch array. */
let buf: Uint8Array = chunkBytes;
let view = chunkView;
let pos = 0;
/** Where the encoding in progress starts in `buf`. */
let start = 0;
let encodeUtf8: (text: string) => Uint8Array = getTextEncoding().encodeUtf8;

export function begin(): void {
  // Like BinaryWriter, take the text encoding configured at the time of the call.
  encodeUtf8 = getTextEncoding().encodeUtf8;
  if (CHUNK - chunkUsed < MIN_ROOM) newChunk();
  buf = chunkBytes;
  view = chunkView;
  start = pos = chunkUsed;
}

/** The encoding just written, taken out of the buffer. */
export function finish(): Uint8Array {
  const length = pos - start;
  let out: Uint8Array;
  if (buf === chunkBytes) {
    out = new Uint8Array(chunk, start, length);
    chunkUsed = (pos + 7) & ~7; // keep views 8-byte aligned, as Node's pool does
  } else if (length >= OWN_BUFFER_FROM) {
    out = buf.slice(start, pos);
  } else {
    newChunk();
    out = new Uint8Array(chunk, 0, length);
    out.set(buf.subarray(start, pos));
    chunkUsed = (length + 7) & ~7;
  }
  release();
  return out;
}

/** Done with the buffer (what was written past the chunk's used part is simply left there). */
export function release(): void {
  if (scratch.length > MAX_KEPT_BUFFER) scratch = new Uint8Array(INITIAL_BUFFER);
  buf = chunkBytes;
  view = chunkView;
}

export function newChunk(): void {
  chunk = new ArrayBuffer(CHUNK);
  chunkBytes = new Uint8Array(chunk);
  chunkView = new DataView(chunk);
  chunkUsed = 0;
}

export function ensure(n: number): void {
  if (pos + n > buf.length) grow(n);
}

export function grow(n: number): void {
  const needed = pos + n;
  if (buf === chunkBytes) {
    // Out of the chunk: go on in the scratch array, at the same offsets.
    if (scratch.length < needed) scratch = new Uint8Array(Math.max(scratch.length * 2, needed));
    scratch.set(chunkBytes.subarray(start, pos), start);
  } else {
    const next = new Uint8Array(Math.max(buf.length * 2, needed));
    next.set(buf.subarray(start, pos), start);
    scratch = next;
  }
  buf = scratch;
  view = new DataView(scratch.buffer);
}

export function varint32(value: number): void {
  ensure(5);
  while (value > 0x7f) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  buf[pos++] = value;
}

/** As protobuf-es's int32(): negative numbers take 10 bytes (sign-extended to 64 bits). */
export function int32(value: number): void {
  if (!Number.isInteger(value) || value > 0x7fffffff || value < -0x80000000) throw new Error("invalid int32: " + value);
  if (value >= 0) return varint32(value);
  ensure(10);
  for (let i = 0; i < 9; i++) {
    buf[pos++] = (value & 0x7f) | 0x80;
    value >>= 7;
  }
  buf[pos++] = 1;
}

/** A 64-bit varint from two's-complement halves (protoInt64.enc). */
export function varint64(lo: number, hi: number): void {
  ensure(10);
  let low = lo >>> 0;
  let high = hi >>> 0;
  while (high !== 0 || low > 0x7f) {
    buf[pos++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  buf[pos++] = low;
}

export function double(value: number): void {
  ensure(8);
  view.setFloat64(pos, value, true);
  pos += 8;
}

export function bytes(value: Uint8Array): void {
  varint32(value.byteLength);
  raw(value);
}

export function raw(value: Uint8Array): void {
  ensure(value.byteLength);
  buf.set(value, pos);
  pos += value.byteLength;
}

export function string(value: string): void {
  const n = value.length;
  if (n <= SHORT_STRING) {
    // ASCII is the same in every UTF-8 encoder: copy it in place, else fall back.
    ensure(n + 1);
    const b = buf;
    const start = pos + 1;
    let seen = 0;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      seen |= c;
      b[start + i] = c;
    }
    if (seen < 0x80) {
      b[pos] = n;
      pos = start + n;
      return;
    }
  }
  bytes(encodeUtf8(value));
}

/** Reserves one byte for a length that endLength() fills in, moving the body if it needs more. */
export function beginLength(): number {
  ensure(1);
  return pos++;
}

/** `plus`: added to the length written (a frame whose length counts one more than its body). */
export function endLength(at: number, plus = 0): void {
  const length = pos - at - 1 + plus;
  if (length <= 0x7f) {
    buf[at] = length;
    return;
  }
  const extra = length < 1 << 14 ? 1 : length < 1 << 21 ? 2 : length < 1 << 28 ? 3 : 4;
  ensure(extra);
  buf.copyWithin(at + 1 + extra, at + 1, pos);
  pos += extra;
  let value = length;
  for (let p = at; value > 0x7f; p++) {
    buf[p] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  buf[at + extra] = value;
}

/** One byte, written as is (a bool's 1 or 0, a NULL_VALUE, a frame header byte). */
export function byte(value: number): void {
  ensure(1);
  buf[pos++] = value;
}

/** Where the next byte goes: with bytesFrom(), the bytes of what was written since. */
export function position(): number {
  return pos;
}

/** A copy of the bytes written from `from` (a position()) up to now. */
export function bytesFrom(from: number): Uint8Array {
  return buf.slice(from, pos);
}

/** The length of the encoding in progress. */
export function writtenLength(): number {
  return pos - start;
}

/** The UTF-8 encoder the encoding in progress writes strings with (protobuf-es's configured one). */
export function textEncoder(): (text: string) => Uint8Array {
  return encodeUtf8;
}
