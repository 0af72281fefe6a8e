import type { Attributes, AttributeValue, HrTime } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { varintSize, writeVarint } from "../codec/varint.js";
import { ServiceSpan } from "./service-span.js";

/*
 * OTLP trace protobuf, written straight from the SDK's ended spans: the messages of
 * opentelemetry-proto's collector/trace/v1 (ExportTraceServiceRequest), trace/v1, common/v1 and
 * resource/v1, by their field numbers. Why our own writer and not the OTLP transformer's: it
 * measures the whole request first and then writes it byte by byte in JavaScript, after the batch
 * processor has kept every span object until the export; here a span is written once, when it
 * ends, with Node's native string and hex writes, and only its bytes are kept (see
 * otlp-span-processor.ts). `npm run bench -- otel-spans` compares the two.
 */

const LEN = 2;
const VARINT = 0;
const I64 = 1;
const I32 = 5;

/** Span flags (trace.proto): the trace flags' low byte, and whether the parent is known to be remote. */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** A growing byte buffer with the protobuf primitives. */
export class ProtoWriter {
  buf: Buffer;
  pos: number;
  /** Where writing starts: bytes left free before it for what is to precede them (see encodeRequestInPlace). */
  readonly start: number;

  constructor(initial = 16 * 1024, start = 0) {
    this.buf = Buffer.allocUnsafe(Math.max(initial, start + 64));
    this.start = start;
    this.pos = start;
  }

  reset(): void {
    this.pos = this.start;
  }

  /** Goes on writing into `buf` instead (whose bytes before `start` are free), from `start`. */
  resetInto(buf: Buffer): void {
    this.buf = buf.length >= this.start + 64 ? buf : Buffer.allocUnsafe(this.start + 16 * 1024);
    this.pos = this.start;
  }

  /** The bytes written so far (a view: copy before reset). */
  bytes(): Buffer {
    return this.buf.subarray(this.start, this.pos);
  }

  /** Whether nothing was written since the last reset. */
  get empty(): boolean {
    return this.pos === this.start;
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }

  varint(value: number): void {
    this.ensure(10);
    const buf = this.buf;
    let v = value >>> 0;
    if (v === value) {
      while (v > 0x7f) {
        buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[this.pos++] = v;
      return;
    }
    // Beyond 32 bits, or negative (int64 two's complement: ten bytes).
    let big = BigInt.asUintN(64, BigInt(Math.trunc(value)));
    while (big > 0x7fn) {
      buf[this.pos++] = Number(big & 0x7fn) | 0x80;
      big >>= 7n;
    }
    buf[this.pos++] = Number(big);
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** A length-delimited string field. */
  string(field: number, value: string): void {
    const n = value.length;
    this.ensure(n * 3 + 16);
    this.tag(field, LEN);
    if (n < 128 && n > 16) {
      // One length byte reserved; fixed if the UTF-8 form turns out longer than 127 bytes.
      const at = this.pos++;
      const written = this.buf.write(value, this.pos, "utf8");
      this.pos += written;
      if (written < 128) this.buf[at] = written;
      else this.#fixLength(at, 1);
      return;
    }
    if (n <= 16) {
      // Short ASCII (keys, names): copied a char at a time, cheaper than a native call.
      const buf = this.buf;
      const at = this.pos;
      let p = at + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c >= 0x80) break;
        buf[p++] = c;
      }
      if (i === n) {
        buf[at] = n;
        this.pos = p;
        return;
      }
    }
    const bytes = Buffer.byteLength(value, "utf8");
    this.varint(bytes);
    this.pos += this.buf.write(value, this.pos, bytes, "utf8");
  }

  /** A length-delimited field of bytes given as hex (trace and span ids). */
  hex(field: number, value: string): void {
    const n = value.length >> 1;
    this.ensure(n + 8);
    this.tag(field, LEN);
    this.varint(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < 2 * n; i += 2) buf[p++] = (HEX[value.charCodeAt(i)]! << 4) | HEX[value.charCodeAt(i + 1)]!;
    this.pos = p;
  }

  /** A length-delimited field of `n` bytes copied from `pool` at `at` (ids whose bytes are known: no hex to parse). */
  idBytes(field: number, pool: Buffer, at: number, n: number): void {
    this.ensure(n + 8);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = (field << 3) | LEN;
    buf[p++] = n;
    for (let i = 0; i < n; i++) buf[p++] = pool[at + i]!;
    this.pos = p;
  }

  /**
   * A string field whose value recurs (attribute keys, span names): its bytes are made once and
   * copied after, which is cheaper than writing the string each time once it is longer than a few
   * characters. Bounded: emptied when full.
   */
  knownString(field: number, value: string): void {
    // One map per field number: a key of field and value together would be a new string to hash each time.
    let known = knownStrings[field];
    if (known === undefined) known = knownStrings[field] = new Map();
    let bytes = known.get(value);
    if (bytes === undefined) {
      if (known.size >= KNOWN_STRINGS) known.clear();
      const start = this.pos;
      this.string(field, value);
      bytes = Buffer.from(this.buf.subarray(start, this.pos));
      known.set(value, bytes);
      return;
    }
    this.raw(bytes);
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  fixed32(field: number, value: number): void {
    this.ensure(16);
    this.tag(field, I32);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  double(field: number, value: number): void {
    this.ensure(16);
    this.tag(field, I64);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** An HrTime ([seconds, nanoseconds]) as fixed64 nanoseconds since the epoch, exactly (past 2^53). */
  time(field: number, [seconds, nanos]: HrTime): void {
    this.timeParts(field, seconds, nanos);
  }

  /** Epoch milliseconds, converted as the SDK's millisToHrTime does (so the nanoseconds match its spans'). */
  timeMs(field: number, ms: number): void {
    this.timeParts(field, Math.trunc(ms / 1000), Math.round((ms % 1000) * 1e6));
  }

  timeParts(field: number, seconds: number, nanos: number): void {
    this.ensure(16);
    this.tag(field, I64);
    // seconds × 1e9 + nanos as two 32-bit halves, each product below 2^53.
    const low16 = seconds & 0xffff;
    const high = (seconds - low16) / 0x10000; // seconds = high × 2^16 + low16
    const a = high * 1e9; // × 2^16 still to apply
    const aLow = a % 0x10000;
    const sumLow = aLow * 0x10000 + low16 * 1e9 + nanos; // < 2^53
    const lo = sumLow % 0x100000000;
    const hi = (a - aLow) / 0x10000 + (sumLow - lo) / 0x100000000;
    this.buf.writeUInt32LE(lo, this.pos);
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** Starts a length-delimited field whose length is not yet known: returns where its length goes. */
  begin(field: number, reserve: 1 | 2): number {
    this.ensure(8);
    this.tag(field, LEN);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  /** Ends the field begun at `at`: writes its length, moving the content if the length needs other than `reserve` bytes. */
  end(at: number, reserve: 1 | 2): void {
    const length = this.pos - at - reserve;
    if (reserve === 1 && length < 0x80) {
      this.buf[at] = length;
      return;
    }
    if (reserve === 2 && length >= 0x80 && length < 0x4000) {
      this.buf[at] = (length & 0x7f) | 0x80;
      this.buf[at + 1] = length >>> 7;
      return;
    }
    this.#fixLength(at, reserve);
  }

  #fixLength(at: number, reserve: number): void {
    const length = this.pos - at - reserve;
    const size = varintSize(length);
    if (size !== reserve) {
      this.ensure(size - reserve);
      this.buf.copy(this.buf, at + size, at + reserve, this.pos);
      this.pos += size - reserve;
    }
    let v = length;
    let p = at;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }
}

const knownStrings: Array<Map<string, Buffer> | undefined> = [];
const KNOWN_STRINGS = 1024;

/** Hex digit values by char code (ids are lowercase hex; anything else reads as 0). */
const HEX = new Uint8Array(128);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[97 + i] = 10 + i;
  HEX[65 + i] = 10 + i;
}

/**
 * Span attributes whose string value repeats (rpc.system, rpc.method, gen_ai.agent.name, ...):
 * their KeyValue field, written once and copied after. Per key, the last value seen, and the
 * bytes once it was seen twice in a row; bounded by clearing.
 */
const repeated = new Map<string, { value: string; bytes: Buffer | undefined }>();
const REPEATED_KEYS = 256;

/** repeated KeyValue `field`: each attribute as a KeyValue message. */
export function writeAttributes(w: ProtoWriter, field: number, attributes: Attributes): void {
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    if (field === 9 && typeof value === "string") {
      const known = repeated.get(key);
      if (known !== undefined && known.value === value) {
        if (known.bytes !== undefined) {
          w.raw(known.bytes);
          continue;
        }
        const start = w.pos;
        writeKeyValue(w, field, key, value);
        known.bytes = Buffer.from(w.buf.subarray(start, w.pos));
        continue;
      }
      if (known !== undefined) {
        known.value = value;
        known.bytes = undefined;
      } else {
        if (repeated.size >= REPEATED_KEYS) repeated.clear();
        repeated.set(key, { value, bytes: undefined });
      }
    }
    writeKeyValue(w, field, key, value);
  }
}

function writeKeyValue(w: ProtoWriter, field: number, key: string, value: AttributeValue): void {
  {
    const kv = w.begin(field, 1);
    w.knownString(1, key);
    const any = w.begin(2, 1);
    writeAnyValue(w, value);
    w.end(any, 1);
    w.end(kv, 1);
  }
}

/** The fields of an AnyValue message (common.proto): string 1, bool 2, int 3, double 4, array 5. */
function writeAnyValue(w: ProtoWriter, value: AttributeValue | null | undefined): void {
  switch (typeof value) {
    case "string":
      w.string(1, value);
      return;
    case "boolean":
      w.tag(2, VARINT);
      w.varint(value ? 1 : 0);
      return;
    case "number":
      if (Number.isSafeInteger(value)) {
        w.tag(3, VARINT);
        w.varint(value);
      } else w.double(4, value);
      return;
    default:
      if (Array.isArray(value)) {
        const array = w.begin(5, 2);
        for (const item of value) {
          const any = w.begin(1, 1); // ArrayValue.values
          writeAnyValue(w, item);
          w.end(any, 1);
        }
        w.end(array, 2);
      }
  }
}

/**
 * One Span message (trace.proto) as field `field` (ScopeSpans.spans = 2): ids, name, kind, times,
 * attributes, events, links, status, flags, and the counts of what the SDK dropped.
 */
export function writeSpan(w: ProtoWriter, field: number, span: ReadableSpan): void {
  const at = w.begin(field, 2);
  const sc = span.spanContext();
  const ours = span instanceof ServiceSpan;
  if (ours && span.traceIdPool !== undefined) w.idBytes(1, span.traceIdPool, span.traceIdAt, 16);
  else w.hex(1, sc.traceId);
  if (ours && span.spanIdPool !== undefined) w.idBytes(2, span.spanIdPool, span.spanIdAt, 8);
  else w.hex(2, sc.spanId);
  const traceState = sc.traceState?.serialize();
  if (traceState) w.string(3, traceState);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    if (ours && span.parentIdPool !== undefined) w.idBytes(4, span.parentIdPool, span.parentIdAt, 8);
    else w.hex(4, parent.spanId);
  }
  w.knownString(5, span.name);
  w.tag(6, VARINT);
  w.varint(span.kind + 1); // OTLP's SpanKind counts from UNSPECIFIED = 0
  if (ours) {
    // Its times are epoch ms: no [s, ns] pairs made to be read once.
    w.timeMs(7, span.startMs);
    w.timeMs(8, span.endMs);
  } else {
    w.time(7, span.startTime);
    w.time(8, span.endTime);
  }
  writeAttributes(w, 9, span.attributes);
  if (span.droppedAttributesCount > 0) {
    w.tag(10, VARINT);
    w.varint(span.droppedAttributesCount);
  }
  if (span.events.length > 0) writeEvents(w, span.events);
  if (span.droppedEventsCount > 0) {
    w.tag(12, VARINT);
    w.varint(span.droppedEventsCount);
  }
  if (span.links.length > 0) writeLinks(w, span.links);
  if (span.droppedLinksCount > 0) {
    w.tag(14, VARINT);
    w.varint(span.droppedLinksCount);
  }
  if (span.status.code !== 0 || span.status.message) {
    const s = w.begin(15, 1);
    if (span.status.message) w.string(2, span.status.message);
    w.tag(3, VARINT);
    w.varint(span.status.code);
    w.end(s, 1);
  }
  w.fixed32(16, spanFlags(sc.traceFlags, parent?.isRemote));
  w.end(at, 2);
}

/** Span.events (11). Apart, and only called when there are some: most spans have none, and a for-of makes an iterator. */
function writeEvents(w: ProtoWriter, events: ReadableSpan["events"]): void {
  for (const event of events) {
    const e = w.begin(11, 1);
    w.time(1, event.time);
    w.string(2, event.name);
    if (event.attributes !== undefined) writeAttributes(w, 3, event.attributes);
    if (event.droppedAttributesCount) {
      w.tag(4, VARINT);
      w.varint(event.droppedAttributesCount);
    }
    w.end(e, 1);
  }
}

/** Span.links (13), as writeEvents. */
function writeLinks(w: ProtoWriter, links: ReadableSpan["links"]): void {
  for (const link of links) {
    const l = w.begin(13, 1);
    w.hex(1, link.context.traceId);
    w.hex(2, link.context.spanId);
    const linkState = link.context.traceState?.serialize();
    if (linkState) w.string(3, linkState);
    if (link.attributes !== undefined) writeAttributes(w, 4, link.attributes);
    if (link.droppedAttributesCount) {
      w.tag(5, VARINT);
      w.varint(link.droppedAttributesCount);
    }
    w.fixed32(6, spanFlags(link.context.traceFlags, link.context.isRemote));
    w.end(l, 1);
  }
}

function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

/** What a ResourceSpans message starts with, and what a ScopeSpans starts with: written once per resource and scope. */
export interface ResourceLike {
  readonly attributes: Attributes;
  readonly schemaUrl?: string;
}
export interface ScopeLike {
  readonly name: string;
  readonly version?: string;
  readonly schemaUrl?: string;
}

/** Resource message (resource.proto) as ResourceSpans.resource = 1. */
export function encodeResource(resource: ResourceLike): Buffer {
  const w = new ProtoWriter(1024);
  const at = w.begin(1, 2);
  writeAttributes(w, 1, resource.attributes);
  w.end(at, 2);
  return Buffer.from(w.bytes());
}

/** InstrumentationScope message (common.proto) as ScopeSpans.scope = 1. */
export function encodeScope(scope: ScopeLike): Buffer {
  const w = new ProtoWriter(256);
  const at = w.begin(1, 2);
  w.string(1, scope.name);
  if (scope.version) w.string(2, scope.version);
  w.end(at, 2);
  return Buffer.from(w.bytes());
}

/** The spans of one scope, already written (each a ScopeSpans.spans = 2 field). */
export interface ScopeBatch {
  readonly scope: Buffer;
  readonly schemaUrl: string | undefined;
  readonly spans: Uint8Array;
}

/**
 * ExportTraceServiceRequest (trace_service.proto) of one resource's ResourceSpans (field 1), with a
 * ScopeSpans (field 2) per scope: the parts' lengths are all known, so it is written in one pass.
 */
export function encodeRequest(resource: Buffer, resourceSchemaUrl: string | undefined, scopes: readonly ScopeBatch[]): Buffer {
  const w = new ProtoWriter(64);
  const scopeHeads: Buffer[] = [];
  const scopeTails: Buffer[] = [];
  let resourceSpansLength = resource.length;
  for (const s of scopes) {
    const tail = s.schemaUrl ? fieldString(3, s.schemaUrl) : EMPTY;
    const length = s.scope.length + s.spans.length + tail.length;
    w.reset();
    w.tag(2, LEN);
    w.varint(length);
    scopeHeads.push(Buffer.from(w.bytes()));
    scopeTails.push(tail);
    resourceSpansLength += w.pos + length;
  }
  const resourceTail = resourceSchemaUrl ? fieldString(3, resourceSchemaUrl) : EMPTY;
  resourceSpansLength += resourceTail.length;
  w.reset();
  w.tag(1, LEN);
  w.varint(resourceSpansLength);
  const out = Buffer.allocUnsafe(w.pos + resourceSpansLength);
  let pos = w.buf.copy(out, 0, 0, w.pos);
  pos += resource.copy(out, pos);
  for (let i = 0; i < scopes.length; i++) {
    pos += scopeHeads[i]!.copy(out, pos);
    pos += scopes[i]!.scope.copy(out, pos);
    out.set(scopes[i]!.spans, pos);
    pos += scopes[i]!.spans.length;
    pos += scopeTails[i]!.copy(out, pos);
  }
  resourceTail.copy(out, pos);
  return out;
}

/**
 * encodeRequest for a batch of one scope whose spans `w` holds, written around them in w's own
 * buffer: the request's head (ResourceSpans' tag and length, the resource, ScopeSpans' tag and
 * length, the scope) in the room before `w.start`, the schema URLs after the spans. Returns the
 * request as a view of w's buffer (w must not be written again while it is in use), or undefined
 * when the head does not fit in the room. Why: a batch is up to megabytes, and encodeRequest's copy
 * into a new buffer (fresh pages, faulted in) cost as much as writing a span per call.
 */
export function encodeRequestInPlace(
  w: ProtoWriter,
  resource: Buffer,
  resourceSchemaUrl: string | undefined,
  scope: Buffer,
  scopeSchemaUrl: string | undefined,
): Buffer | undefined {
  const spansLength = w.pos - w.start;
  if (scopeSchemaUrl) w.string(3, scopeSchemaUrl);
  const scopeSpansLength = scope.length + w.pos - w.start;
  const scopeEnd = w.pos;
  if (resourceSchemaUrl) w.string(3, resourceSchemaUrl);
  const resourceTail = w.pos - scopeEnd;
  const resourceSpansLength = resource.length + 1 + varintSize(scopeSpansLength) + scopeSpansLength + resourceTail;
  const headLength = 1 + varintSize(resourceSpansLength) + resource.length + 1 + varintSize(scopeSpansLength) + scope.length;
  if (headLength > w.start) {
    w.pos = w.start + spansLength; // the tails go again
    return undefined;
  }
  const buf = w.buf;
  let p = w.start - headLength;
  const first = p;
  buf[p++] = (1 << 3) | LEN;
  p = writeVarint(buf, p, resourceSpansLength);
  p += resource.copy(buf, p);
  buf[p++] = (2 << 3) | LEN;
  p = writeVarint(buf, p, scopeSpansLength);
  scope.copy(buf, p);
  return buf.subarray(first, w.pos);
}

const EMPTY = Buffer.alloc(0);

function fieldString(field: number, value: string): Buffer {
  const w = new ProtoWriter(value.length * 3 + 8);
  w.string(field, value);
  return Buffer.from(w.bytes());
}
