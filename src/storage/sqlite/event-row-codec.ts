import { fromBinary } from "@bufbuild/protobuf";
import { TaskSchema, type Artifact, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeFramedArtifacts, encodeTask } from "../../codec/task-encoder.js";
import type { LoggedEvent, TaskChange } from "../../lifecycle/index.js";
import { varintSize, writeVarint } from "../../codec/varint.js";

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
 * The BATCH framing of writes[from..to), all artifact writes, each framed as encodeEvent's body
 * for it (encodeTask of a Task holding that artifact alone is its one `artifacts` item), written
 * by the task encoder in one pass. Why: encoding the chunks one by one (a Task literal, an
 * encode and a byte array each) was most of a burst's per-chunk cost on SQLite.
 */
function frameArtifactRun(writes: readonly ArtifactWrite[], from: number, to: number): Uint8Array {
  return encodeFramedArtifacts(writes, from, to, artifactHeader);
}

const artifactHeader = (w: ArtifactWrite): number => (ARTIFACT << 8) | (w.append ? APPEND : 0) | (w.lastChunk ? LAST_CHUNK : 0);

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

/**
 * Each artifact change of an `artifact_tail` row (or of a body encodeArtifactChanges made) as
 * where its item (a Task's one `artifacts` item) lies in `body`, for artifacts-blob.ts: offsets,
 * not views, as a view per chunk cost more than what is done with it.
 */
export function eachFramedArtifactChange(body: Uint8Array, each: (from: number, to: number, append: boolean) => void): void {
  let at = 0;
  while (at < body.length) {
    const kind = body[at++]!;
    const flags = body[at++]!;
    let n = 0;
    for (let scale = 1; ; scale *= 128) {
      const b = body[at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) break;
    }
    if (kind !== ARTIFACT || n === 0) throw new Error(`artifact_tail row holds an event of kind ${kind}`);
    each(at, at + n - 1, (flags & APPEND) !== 0);
    at += n - 1;
  }
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
    at = writeVarint(out, at, body === null ? 0 : body.length + 1);
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
