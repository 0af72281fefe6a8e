import { fromBinary } from "@bufbuild/protobuf";
import { TaskSchema, type Artifact, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeTask } from "../../codec/task-encoder.js";
import type { LoggedEvent } from "../../lifecycle/event-log.js";
import type { TaskChange } from "../../lifecycle/task-repository.js";
import { varintSize } from "../../codec/varint.js";

const STATUS = 1;
const ARTIFACT = 2;
const HISTORY = 3;
/** A row holding the events of versions first_version..version, framed in its body (migration 6). */
export const BATCH = 4;
const APPEND = 1;
const LAST_CHUNK = 2;

/** A row of `task_events` (kind, flags, body) for one event; see migration 3. */
export function encodeEvent(event: LoggedEvent): [kind: number, flags: number, body: Uint8Array | null] {
  switch (event.kind) {
    case "status":
      return [STATUS, 0, encodeTask(taskLiteral({ status: event.status }))];
    case "artifact":
      return [ARTIFACT, (event.append ? APPEND : 0) | (event.lastChunk ? LAST_CHUNK : 0), encodeTask(taskLiteral({ artifacts: [event.artifact] }))];
    case "history":
      return [HISTORY, 0, null]; // the message is in `history`; the row keeps the versions gapless
  }
}

export function decodeEvent(row: { version: number; kind: number; flags: number; body: Uint8Array | null }, taskId: string, contextId: string): LoggedEvent {
  const { version } = row;
  if (row.kind === STATUS) return { kind: "status", version, taskId, contextId, status: fromBinary(TaskSchema, row.body!).status! };
  if (row.kind === ARTIFACT) {
    const artifact = fromBinary(TaskSchema, row.body!).artifacts[0]!;
    return { kind: "artifact", version, taskId, contextId, artifact, append: (row.flags & APPEND) !== 0, lastChunk: (row.flags & LAST_CHUNK) !== 0 };
  }
  // A history event has no stream event; its message is not needed to resume.
  return { kind: "history", version, taskId, contextId, message: undefined! };
}

function taskLiteral(fields: Partial<Pick<Task, "status" | "artifacts">>): Task {
  return { $typeName: "lf.a2a.v1.Task", id: "", contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined, ...fields };
}

/**
 * The body of a BATCH row: the events of one task in one commit, in version order, each framed
 * as its kind, its flags, then its body's length + 1 (0: no body) as a varint, then the body.
 * Why one row per task and commit instead of one per event: a blocking SendMessage makes three
 * events in one commit, and each row is an insert into the table and into two indexes.
 */
export function encodeEventBatch(events: readonly LoggedEvent[]): Uint8Array {
  // Runs of artifact events are framed together (see frameArtifactRun), the rest one by one.
  const pieces: Uint8Array[] = [];
  let size = 0;
  for (let from = 0; from < events.length; ) {
    let to = from;
    while (to < events.length && events[to]!.kind === "artifact") to++;
    const piece = to > from ? frameArtifactRun(events as readonly ArtifactWrite[], from, to) : frame([encodeEvent(events[to++]!)]);
    pieces.push(piece);
    size += piece.length;
    from = to;
  }
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * The artifact changes one commit made to a task, for its `artifact_tail` row (migration 6):
 * framed as a BATCH body, so the appends since the task's artifacts blob was last written are
 * kept without rewriting that blob (appending a chunk costs the chunk, not every part before it).
 */
export function encodeArtifactChanges(changes: readonly ArtifactChange[]): Uint8Array {
  return frameArtifactRun(changes, 0, changes.length);
}

/** What framing an artifact change needs; an artifact change and an artifact event both have it. */
interface ArtifactWrite {
  readonly artifact: Artifact;
  readonly append: boolean;
  readonly lastChunk: boolean;
}

/**
 * The BATCH framing of writes[from..to), all artifact writes. One encode of a Task holding all
 * their artifacts: its bytes are each artifact's `artifacts` item (tag, length, body) in turn,
 * exactly what encodeTask of a Task holding that artifact alone gives, so each item is framed as
 * is. Why: encoding the chunks one by one (a Task literal, an encode and a byte array each) was
 * most of a burst's per-chunk cost on SQLite.
 */
function frameArtifactRun(writes: readonly ArtifactWrite[], from: number, to: number): Uint8Array {
  const artifacts = new Array<Artifact>(to - from);
  for (let i = from; i < to; i++) artifacts[i - from] = writes[i]!.artifact;
  const items = encodeTask(taskLiteral({ artifacts }));
  let size = 0;
  for (let at = 0; at < items.length; ) {
    const item = itemLength(items, at);
    size += 2 + varintSize(item + 1) + item;
    at += item;
  }
  const out = new Uint8Array(size);
  let end = 0;
  let i = from;
  for (let at = 0; at < items.length; i++) {
    const item = itemLength(items, at);
    const w = writes[i]!;
    out[end++] = ARTIFACT;
    out[end++] = (w.append ? APPEND : 0) | (w.lastChunk ? LAST_CHUNK : 0);
    end = writeVarint(out, end, item + 1);
    out.set(items.subarray(at, at + item), end);
    end += item;
    at += item;
  }
  if (i !== to || end !== size) throw new Error(`encoded ${i - from} artifact items for ${to - from} artifacts`);
  return out;
}

/** The length of the field item at `at` of an encoded message: its one-byte tag, its length varint, its body. */
function itemLength(bytes: Uint8Array, at: number): number {
  let n = 0;
  let p = at + 1; // the tag: field 4, wire type 2, one byte
  for (let shift = 0; ; shift += 7) {
    const b = bytes[p++]!;
    n += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  return p - at + n;
}

function writeVarint(out: Uint8Array, at: number, value: number): number {
  let n = value;
  while (n > 0x7f) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
}

export function decodeArtifactChanges(body: Uint8Array): ArtifactChange[] {
  const changes: ArtifactChange[] = [];
  unframe(body, (kind, flags, part) => {
    if (kind !== ARTIFACT || part === null) throw new Error(`artifact_tail row holds an event of kind ${kind}`);
    changes.push({
      kind: "artifact",
      artifact: fromBinary(TaskSchema, part).artifacts[0]!,
      append: (flags & APPEND) !== 0,
      lastChunk: (flags & LAST_CHUNK) !== 0,
    });
  });
  return changes;
}

type ArtifactChange = Extract<TaskChange, { kind: "artifact" }>;

/** Each event as its kind, its flags, its body's length + 1 (0: no body) as a varint, then the body. */
function frame(parts: ReadonlyArray<readonly [number, number, Uint8Array | null]>): Uint8Array {
  let size = 0;
  for (const [, , body] of parts) size += 2 + varintSize(body === null ? 0 : body.length + 1) + (body?.length ?? 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const [kind, flags, body] of parts) {
    out[at++] = kind;
    out[at++] = flags;
    let n = body === null ? 0 : body.length + 1;
    while (n > 0x7f) {
      out[at++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[at++] = n;
    if (body !== null) {
      out.set(body, at);
      at += body.length;
    }
  }
  return out;
}

function unframe(body: Uint8Array, each: (kind: number, flags: number, part: Uint8Array | null) => void): void {
  let at = 0;
  while (at < body.length) {
    const kind = body[at++]!;
    const flags = body[at++]!;
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      const b = body[at++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    const part = n === 0 ? null : body.subarray(at, at + n - 1);
    if (part !== null) at += n - 1;
    each(kind, flags, part);
  }
}

/** The events of a row of `task_events`, one or a BATCH, from `firstVersion` (the row's version unless a batch). */
export function decodeEventRow(
  row: { version: number; first_version: number | null; kind: number; flags: number; body: Uint8Array | null },
  taskId: string,
  contextId: string,
): LoggedEvent[] {
  if (row.kind !== BATCH) return [decodeEvent(row, taskId, contextId)];
  const events: LoggedEvent[] = [];
  let version = row.first_version!;
  unframe(row.body!, (kind, flags, body) => events.push(decodeEvent({ version: version++, kind, flags, body }, taskId, contextId)));
  if (version - 1 !== row.version) throw new Error(`task_events batch row of version ${row.version} holds events up to ${version - 1}`);
  return events;
}
