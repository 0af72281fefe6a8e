import type { Artifact } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { varintSize, writeVarint } from "../../codec/varint.js";
import { eachFramedArtifactChange } from "./event-row-codec.js";

/**
 * A task's artifacts blob (a Task holding only `artifacts`, see task-row-codec.ts) with artifact
 * changes applied to it, built from bytes: the items of the blob and of the changes (`bodies`:
 * `artifact_tail` rows and the batch's own, framed as event-row-codec.ts frames them) are cut
 * apart and joined again, and no chunk is encoded a second time. Why: a task streaming its
 * answer in a burst rewrites its blob each time the tail has grown as large as it, and once more
 * when it finishes; encoding every chunk again at each rewrite cost a 100,000-chunk burst on
 * SQLite several encodes of each chunk more than the memory store pays.
 *
 * The changes are merged as mergeArtifact (lifecycle/task-change.ts) merges them: a new id is
 * added at the end, a replacing change takes its artifact's place, an append adds its parts after
 * the artifact's, takes its metadata if it has some and adds the extensions it lacks. Each
 * artifact is written as the task encoder writes it (fields in number order), so the result is
 * the bytes of encodeArtifacts(the merged artifacts).
 *
 * `expected`, when given, is what the merge must give (the task's artifacts in memory, when a
 * write rewrites the blob): the result is checked against it (ids, counts of parts and
 * extensions, metadata or none), a cheap guard against bytes this file would misread. Without it
 * (a read) the merge is what decoding each change and merging it would give: ids and extensions
 * are compared as bytes, which is how they compare once decoded. Undefined when the check fails,
 * or when an item is not as our encoder writes it (unknown fields, fields out of order): the
 * caller then encodes the artifacts, or decodes the changes one by one.
 */
export function mergeArtifactsBlob(blob: Uint8Array | null, bodies: readonly Uint8Array[], expected?: readonly Artifact[]): Uint8Array | undefined {
  const artifacts: Pieces[] = [];
  if (blob !== null && !readBlob(blob, artifacts)) return undefined;
  let last: Pieces | undefined; // the artifact the last change went to: a stream appends to one artifact
  let failed = false;
  for (const body of bodies) {
    eachFramedArtifactChange(body, (from, to, append) => {
      if (failed) return;
      if (!readChange(body, from, to)) {
        failed = true;
        return;
      }
      let target = last !== undefined && idIs(last, body) ? last : undefined;
      if (target === undefined) {
        const at = indexOf(artifacts, body);
        target = at < 0 ? undefined : artifacts[at];
        if (target === undefined || !append) {
          const pieces = piecesOf(body);
          if (target === undefined) artifacts.push(pieces);
          else artifacts[at] = pieces;
          last = pieces;
          return;
        }
      } else if (!append) {
        const pieces = piecesOf(body);
        artifacts[artifacts.indexOf(target)] = pieces;
        last = pieces;
        return;
      }
      appendTo(target, body);
      last = target;
    });
    if (failed) return undefined;
  }
  return expected === undefined || matches(artifacts, expected) ? write(artifacts) : undefined;
}

/** A range of bytes in one of the inputs. */
interface Range {
  readonly bytes: Uint8Array;
  readonly from: number;
  readonly to: number;
}

/** One artifact as ranges of the bytes it was read from. */
interface Pieces {
  /** The value of artifact_id (field 1), for matching. */
  readonly id: Range;
  /** Fields 1-3 (artifact_id, name, description) as written. */
  readonly head: Range;
  /** Runs of part items (field 4), in order. */
  readonly parts: Range[];
  partCount: number;
  /** The metadata item (field 5), when set. */
  metadata: Range | undefined;
  /** The extensions' items (field 6), one each. */
  extensions: Range[];
}

const ARTIFACTS_TAG = (4 << 3) | 2; // Task.artifacts
const FIELD_PARTS = 4;
const FIELD_METADATA = 5;
const FIELD_EXTENSIONS = 6;
const NONE = -1;

/**
 * The fields of the artifact last read (readArtifact), as offsets into its bytes: one set,
 * reused, so that an append (a streamed chunk) allocates no more than its run of parts.
 */
const read = {
  idFrom: 0,
  idTo: 0,
  headFrom: 0,
  headTo: 0,
  partsFrom: NONE,
  partsTo: NONE,
  partCount: 0,
  metadataFrom: NONE,
  metadataTo: NONE,
  extensions: [] as number[], // from, to, from, to...
};

/** The offset after the varint that readLength read. */
let after = 0;

/** The varint (a length) at `at`; sets `after`. Infinity when the bytes end inside it. */
function readLength(bytes: Uint8Array, at: number): number {
  let b = bytes[at++];
  if (b === undefined) return Number.POSITIVE_INFINITY;
  if (b < 0x80) {
    after = at;
    return b;
  }
  let n = b & 0x7f;
  for (let scale = 128; ; scale *= 128) {
    b = bytes[at++];
    if (b === undefined) return Number.POSITIVE_INFINITY;
    n += (b & 0x7f) * scale;
    if (b < 0x80) {
      after = at;
      return n;
    }
  }
}

/** The `artifacts` items of a Task's bytes into `into`; false if the bytes hold anything else. */
function readBlob(bytes: Uint8Array, into: Pieces[]): boolean {
  for (let at = 0; at < bytes.length; ) {
    if (bytes[at] !== ARTIFACTS_TAG) return false;
    const end = readLength(bytes, at + 1) + after;
    if (!(end <= bytes.length) || !readArtifact(bytes, after, end)) return false;
    into.push(piecesOf(bytes));
    at = end;
  }
  return true;
}

/** The artifact of a change's item, bytes[from..to): a Task's one `artifacts` item (tag, length, Artifact). */
function readChange(bytes: Uint8Array, from: number, to: number): boolean {
  if (bytes[from] !== ARTIFACTS_TAG) return false;
  const length = readLength(bytes, from + 1);
  return after + length === to && readArtifact(bytes, after, to);
}

/**
 * Reads the fields of the Artifact in bytes[from..to) into `read`. False for anything our
 * encoder would not write: a field it does not know, a wire type other than length-delimited,
 * fields out of order, or repeated where they may not be.
 */
function readArtifact(bytes: Uint8Array, from: number, to: number): boolean {
  read.idFrom = read.idTo = from;
  read.headFrom = read.headTo = from;
  read.partsFrom = read.partsTo = NONE;
  read.partCount = 0;
  read.metadataFrom = read.metadataTo = NONE;
  read.extensions.length = 0;
  let lastField = 0;
  for (let at = from; at < to; ) {
    const tag = bytes[at]!;
    const field = tag >>> 3;
    // One tag byte (fields 1-6), length-delimited; a tag byte of 0x80 or more gives field > 6.
    if ((tag & 7) !== 2 || field < 1 || field > FIELD_EXTENSIONS) return false;
    if (field < lastField || (field === lastField && field !== FIELD_PARTS && field !== FIELD_EXTENSIONS)) return false;
    lastField = field;
    const end = readLength(bytes, at + 1) + after;
    if (!(end <= to)) return false;
    if (field < FIELD_PARTS) {
      if (field === 1) {
        read.idFrom = after;
        read.idTo = end;
      }
      read.headTo = end;
    } else if (field === FIELD_PARTS) {
      if (read.partsFrom === NONE) read.partsFrom = at;
      read.partsTo = end;
      read.partCount++;
    } else if (field === FIELD_METADATA) {
      read.metadataFrom = at;
      read.metadataTo = end;
    } else read.extensions.push(at, end);
    at = end;
  }
  return true;
}

/** The artifact just read, as its own Pieces. */
function piecesOf(bytes: Uint8Array): Pieces {
  const extensions: Range[] = [];
  for (let i = 0; i < read.extensions.length; i += 2) extensions.push({ bytes, from: read.extensions[i]!, to: read.extensions[i + 1]! });
  return {
    id: { bytes, from: read.idFrom, to: read.idTo },
    head: { bytes, from: read.headFrom, to: read.headTo },
    parts: read.partsFrom === NONE ? [] : [{ bytes, from: read.partsFrom, to: read.partsTo }],
    partCount: read.partCount,
    metadata: read.metadataFrom === NONE ? undefined : { bytes, from: read.metadataFrom, to: read.metadataTo },
    extensions,
  };
}

/** mergeArtifact's append of the artifact just read: its parts after the target's, its metadata if it has some, the extensions the target lacks. */
function appendTo(target: Pieces, bytes: Uint8Array): void {
  if (read.partsFrom !== NONE) target.parts.push({ bytes, from: read.partsFrom, to: read.partsTo });
  target.partCount += read.partCount;
  if (read.metadataFrom !== NONE) target.metadata = { bytes, from: read.metadataFrom, to: read.metadataTo };
  for (let i = 0; i < read.extensions.length; i += 2) {
    const extension = { bytes, from: read.extensions[i]!, to: read.extensions[i + 1]! };
    if (!target.extensions.some((e) => sameBytes(e, extension))) target.extensions.push(extension);
  }
}

/** Whether the artifact just read (in `bytes`) has the id of `pieces`. */
function idIs(pieces: Pieces, bytes: Uint8Array): boolean {
  return sameBytes(pieces.id, { bytes, from: read.idFrom, to: read.idTo });
}

function indexOf(artifacts: readonly Pieces[], bytes: Uint8Array): number {
  for (let i = 0; i < artifacts.length; i++) if (idIs(artifacts[i]!, bytes)) return i;
  return -1;
}

function sameBytes(a: Range, b: Range): boolean {
  const n = a.to - a.from;
  if (b.to - b.from !== n) return false;
  for (let i = 0; i < n; i++) if (a.bytes[a.from + i] !== b.bytes[b.from + i]) return false;
  return true;
}

const utf8 = new TextDecoder();

/** Whether the merge gave what the task holds: the same ids, in order, with as many parts and extensions, and metadata where it has some. */
function matches(artifacts: readonly Pieces[], expected: readonly Artifact[]): boolean {
  if (artifacts.length !== expected.length) return false;
  for (let i = 0; i < artifacts.length; i++) {
    const a = artifacts[i]!;
    const e = expected[i]!;
    if (a.partCount !== e.parts.length || a.extensions.length !== e.extensions.length || (a.metadata !== undefined) !== (e.metadata !== undefined))
      return false;
    // Decoded, not compared as bytes: an id with a lone surrogate encodes as U+FFFD, so two ids can share bytes.
    if (utf8.decode(a.id.bytes.subarray(a.id.from, a.id.to)) !== e.artifactId) return false;
  }
  return true;
}

/** The Task bytes holding these artifacts, each an `artifacts` item. */
function write(artifacts: readonly Pieces[]): Uint8Array | undefined {
  if (artifacts.length === 0) return undefined; // as encodeArtifacts: no blob (not reached: changes only add)
  const sizes = artifacts.map(bodySize);
  let total = 0;
  for (const size of sizes) total += 1 + varintSize(size) + size;
  const out = new Uint8Array(total);
  let at = 0;
  for (let i = 0; i < artifacts.length; i++) {
    const a = artifacts[i]!;
    out[at++] = ARTIFACTS_TAG;
    at = writeVarint(out, at, sizes[i]!);
    at = copy(out, at, a.head);
    for (const run of a.parts) at = copy(out, at, run);
    if (a.metadata !== undefined) at = copy(out, at, a.metadata);
    for (const e of a.extensions) at = copy(out, at, e);
  }
  if (at !== total) throw new Error(`joined ${at} bytes of artifacts, expected ${total}`);
  return out;
}

/** Copies `range` to out[at..]; short runs byte by byte (a view per run cost more than the copy). */
function copy(out: Uint8Array, at: number, range: Range): number {
  const { bytes, from, to } = range;
  if (to - from < 64) for (let i = from; i < to; i++) out[at++] = bytes[i]!;
  else {
    out.set(bytes.subarray(from, to), at);
    at += to - from;
  }
  return at;
}

function bodySize(a: Pieces): number {
  let size = a.head.to - a.head.from;
  if (a.metadata !== undefined) size += a.metadata.to - a.metadata.from;
  for (const run of a.parts) size += run.to - run.from;
  for (const e of a.extensions) size += e.to - e.from;
  return size;
}
