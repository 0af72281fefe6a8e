import type { Artifact, Message, Part, Task, TaskStatus } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventLogOptions, LoggedEvent } from "../../lifecycle/event-log.js";
import { artifactLiteral } from "../../lifecycle/message-literals.js";
import type { TaskChange } from "../../lifecycle/task-repository.js";

/** Events kept for resume across all tasks when the operator sets no cap. */
export const DEFAULT_MAX_EVENTS = 100_000;
/** About the bytes the kept events may weigh together when the operator sets no cap. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

// An entry's `meta`: its kind and flags in the low five bits, its weight times FLAGS above them
// (arithmetic, not bit shifts: a large part's weight would overflow 32 bits).
const STATUS = 0;
const ARTIFACT = 1;
const HISTORY = 2;
const KIND = 3;
const APPEND = 4;
const LAST_CHUNK = 8;
/**
 * A one-part append whose other fields are its `payload`'s (see TaskRing.header), and whose part
 * is the task's own: kept as where it is in the task (see `refs`), not as the part.
 */
const PART_ONLY = 16;
const FLAGS = 32;
const weightOf = (meta: number) => (meta - (meta % FLAGS)) / FLAGS;

/** Artifacts of a task up to this many are found by index from a PART_ONLY entry. */
const ARTIFACTS = 4096;

/**
 * One task's kept events, oldest first, as parallel arrays with no object per event: the entry
 * at index i is the change of version `first + i` (a task's changes are logged in version order,
 * one version each). `head` is the first still kept (dropping from the front by index, not by shift).
 */
interface TaskRing {
  readonly contextId: string;
  /** The change's artifact, status or message; for a PART_ONLY entry, the artifact whose fields it shares. */
  payload: unknown[];
  meta: number[];
  /**
   * Artifact entries: the artifact's index in the task, plus ARTIFACTS × (1 + the part's index in
   * it) for a PART_ONLY entry, whose part is then `task.artifacts[a].parts[p]`; -1 for others.
   */
  refs: number[];
  head: number;
  /** The version of the entry at index 0. */
  first: number;
  /** The last artifact kept whole that later one-part updates may share their fields with. */
  header: Artifact | undefined;
  /** Where that artifact was in the task last (a guess, checked). */
  artifactIndex: number;
}

/**
 * The memory store's log of events for resume, bounded twice: events older than the
 * retention window go, and so do the oldest events of all tasks once `maxEvents` are kept.
 * One queue of task ids (with their times) in the order events were recorded says whose event
 * is oldest, so dropping is O(1) per event and needs no timer.
 *
 * Why no event object is kept: every kept object outlives many young-generation collections
 * and is copied by each until it is promoted, and then weighs on every full collection for as long
 * as it is kept, so an object per event (plus the artifact and its parts list for a streamed chunk)
 * cost a per-turn stream more in garbage collection than the rest of the log. A chunk (a one-part
 * append whose artifact fields repeat) keeps only where its part is in the task, which holds it
 * anyway: once the task is settled and packed off the heap, its chunks leave nothing on the heap
 * here either. A part the task is about to lose (its artifact is replaced) is taken into the log
 * first (`beforeChange`). Events are rebuilt, as they were published, when read.
 */
export class EventRing {
  private readonly rings = new Map<string, TaskRing>();
  /** The task id and record time of every kept event, oldest first. */
  private order: string[] = [];
  private orderAt: number[] = [];
  private orderHead = 0;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  /** The ring of the task recorded last (the usual next one). */
  private lastRing: TaskRing | undefined;
  private lastTaskId: string | undefined;
  /** Estimated bytes of the kept events. */
  bytes = 0;
  readonly retentionMs: number;

  constructor(
    options: EventLogOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.retentionMs = options.retentionMs;
    this.maxEvents = Math.max(1, options.maxEvents ?? DEFAULT_MAX_EVENTS);
    this.maxBytes = Math.max(1, options.maxBytes ?? DEFAULT_MAX_BYTES);
  }

  /** Events kept, across all tasks. */
  get size(): number {
    return this.order.length - this.orderHead;
  }

  /** Keeps `event` (as recordChange does, without a task: its parts are kept as they are). */
  record(event: LoggedEvent): void {
    this.recordChange(event.taskId, event.contextId, event.version, event, undefined);
  }

  /**
   * Call before `change` is applied to `task`: an artifact about to be replaced takes the parts
   * this log finds in it along to the log, since the task will no longer hold them.
   */
  beforeChange(taskId: string, task: Task, change: TaskChange): void {
    if (change.kind !== "artifact" || change.append) return;
    const ring = this.rings.get(taskId);
    if (ring === undefined) return;
    const index = indexOfArtifact(task.artifacts, change.artifact.artifactId, ring.artifactIndex);
    if (index < 0) return;
    const parts = task.artifacts[index]!.parts;
    const { meta, refs } = ring;
    // Back to the artifact's last replacement: what came before it was taken along then.
    for (let i = meta.length - 1; i >= ring.head; i--) {
      const ref = refs[i]!;
      if (ref < 0 || ref % ARTIFACTS !== index) continue;
      const flags = meta[i]! % FLAGS;
      if (flags & PART_ONLY) {
        const { artifactId, name, description } = ring.payload[i] as Artifact;
        ring.payload[i] = artifactLiteral({
          artifactId,
          name,
          description,
          parts: [parts[(ref - index) / ARTIFACTS - 1]!],
          metadata: undefined,
          extensions: [],
        });
        meta[i]! -= PART_ONLY;
        refs[i] = index;
      } else if (!(flags & APPEND)) {
        break;
      }
    }
  }

  /**
   * Keeps the change that made version `version` of task `taskId`, as the event it was published
   * as. `task`: the task with the change applied (a chunk is then kept as where its part is in it).
   */
  recordChange(taskId: string, contextId: string, version: number, change: TaskChange, task: Task | undefined): void {
    const now = this.now();
    const ring = this.ringFor(taskId, contextId, version);
    let meta: number;
    let payload: unknown;
    let ref = -1;
    switch (change.kind) {
      case "artifact": {
        const { artifact } = change;
        meta = ARTIFACT + (change.append ? APPEND : 0) + (change.lastChunk ? LAST_CHUNK : 0) + (96 + partsWeight(artifact.parts)) * FLAGS;
        const index = task === undefined ? -1 : indexOfArtifact(task.artifacts, artifact.artifactId, ring.artifactIndex);
        if (index >= 0 && index < ARTIFACTS) {
          ring.artifactIndex = index;
          ref = index;
        }
        const plain = artifact.metadata === undefined && artifact.extensions.length === 0 && artifact.$unknown === undefined;
        const header = ring.header;
        const parts = ref < 0 ? undefined : task!.artifacts[ref]!.parts;
        if (
          plain &&
          change.append &&
          artifact.parts.length === 1 &&
          parts !== undefined &&
          parts[parts.length - 1] === artifact.parts[0] &&
          header !== undefined &&
          header.artifactId === artifact.artifactId &&
          header.name === artifact.name &&
          header.description === artifact.description
        ) {
          meta += PART_ONLY;
          payload = header;
          ref += ARTIFACTS * parts.length;
        } else {
          payload = artifact;
          if (plain) ring.header = artifact;
        }
        break;
      }
      case "status":
        meta = STATUS + (96 + (change.status.message === undefined ? 0 : partsWeight(change.status.message.parts))) * FLAGS;
        payload = change.status;
        break;
      case "history":
        meta = HISTORY + 64 * FLAGS;
        payload = change.message;
        break;
    }
    ring.payload.push(payload);
    ring.meta.push(meta);
    ring.refs.push(ref);
    this.bytes += weightOf(meta);
    this.order.push(taskId);
    this.orderAt.push(now);
    this.dropBeyondBounds(now);
  }

  /**
   * The kept events of `taskId` after `afterVersion` up to `currentVersion`, or undefined when
   * the one right after the cursor is gone (or the cursor is ahead of the task). `task`: the task
   * as it is now (asked for only when a chunk's part is to be found in it).
   */
  after(taskId: string, afterVersion: number, currentVersion: number, task?: () => Task): LoggedEvent[] | undefined {
    if (afterVersion > currentVersion || afterVersion < 0) return undefined;
    if (afterVersion === currentVersion) return [];
    this.dropBeyondBounds(this.now());
    const ring = this.rings.get(taskId);
    if (ring === undefined) return undefined;
    const oldest = ring.first + ring.head;
    if (oldest > afterVersion + 1) return undefined;
    const start = afterVersion + 1 - ring.first;
    const found: LoggedEvent[] = [];
    let current: Task | undefined;
    const taskNow = () => (current ??= task?.());
    for (let i = start; i < ring.meta.length; i++) {
      const event = eventAt(taskId, ring, i, taskNow);
      if (event === undefined) return undefined;
      found.push(event);
    }
    return found.length > 0 && found[found.length - 1]!.version === currentVersion ? found : undefined;
  }

  private ringFor(taskId: string, contextId: string, version: number): TaskRing {
    // Versions follow each other: a task's ring is found by its first version plus its length.
    if (taskId === this.lastTaskId) return this.lastRing!;
    let ring = this.rings.get(taskId);
    if (ring === undefined) {
      ring = { contextId, payload: [], meta: [], refs: [], head: 0, first: version, header: undefined, artifactIndex: 0 };
      this.rings.set(taskId, ring);
    }
    this.lastTaskId = taskId;
    this.lastRing = ring;
    return ring;
  }

  /** Drops the oldest events while over a cap or past the retention window. */
  private dropBeyondBounds(now: number): void {
    const oldest = now - this.retentionMs;
    while (this.size > this.maxEvents || this.bytes > this.maxBytes || (this.size > 0 && this.orderAt[this.orderHead]! < oldest)) this.dropOldest();
  }

  private dropOldest(): void {
    const taskId = this.order[this.orderHead]!;
    this.order[this.orderHead] = undefined!;
    this.orderHead++;
    if (this.orderHead > 1024 && this.orderHead * 2 > this.order.length) {
      this.order = this.order.slice(this.orderHead);
      this.orderAt = this.orderAt.slice(this.orderHead);
      this.orderHead = 0;
    }
    const ring = this.rings.get(taskId)!;
    const { head } = ring;
    ring.payload[head] = undefined;
    this.bytes -= weightOf(ring.meta[head]!);
    ring.head++;
    if (ring.head === ring.meta.length) {
      this.rings.delete(taskId);
      if (this.lastRing === ring) this.lastRing = this.lastTaskId = undefined;
    } else if (ring.head > 64 && ring.head * 2 > ring.meta.length) {
      ring.payload = ring.payload.slice(ring.head);
      ring.meta = ring.meta.slice(ring.head);
      ring.refs = ring.refs.slice(ring.head);
      ring.first += ring.head;
      ring.head = 0;
    }
  }
}

/** The event of entry `i`, as it was published; undefined if its part is not where it was kept (the task changed under the log). */
function eventAt(taskId: string, ring: TaskRing, i: number, task: () => Task | undefined): LoggedEvent | undefined {
  const flags = ring.meta[i]! % FLAGS;
  const version = ring.first + i;
  const { contextId } = ring;
  switch (flags & KIND) {
    case STATUS:
      return { kind: "status", version, taskId, contextId, status: ring.payload[i] as TaskStatus };
    case HISTORY:
      return { kind: "history", version, taskId, contextId, message: ring.payload[i] as Message };
    default: {
      let artifact = ring.payload[i] as Artifact;
      if (flags & PART_ONLY) {
        const ref = ring.refs[i]!;
        const index = ref % ARTIFACTS;
        const part = task()?.artifacts[index]?.parts[(ref - index) / ARTIFACTS - 1];
        if (part === undefined) return undefined;
        const { artifactId, name, description } = artifact;
        artifact = artifactLiteral({ artifactId, name, description, parts: [part], metadata: undefined, extensions: [] });
      }
      return { kind: "artifact", version, taskId, contextId, artifact, append: (flags & APPEND) !== 0, lastChunk: (flags & LAST_CHUNK) !== 0 };
    }
  }
}

/** The index of artifact `artifactId` in `artifacts`, trying `guess` first; -1 if none. */
function indexOfArtifact(artifacts: readonly Artifact[], artifactId: string, guess: number): number {
  if (artifacts[guess]?.artifactId === artifactId) return guess;
  for (let i = 0; i < artifacts.length; i++) if (artifacts[i]!.artifactId === artifactId) return i;
  return -1;
}

/**
 * About the bytes an event keeps alive: what its parts carry plus a little per object. Why an
 * estimate: encoding every event to weigh it would cost more than keeping it. An event that
 * replaces an artifact keeps its own parts, which the task may no longer hold.
 */
function partsWeight(parts: readonly Part[]): number {
  let bytes = 0;
  for (let i = 0; i < parts.length; i++) {
    const { content } = parts[i]!;
    if (content.case === "text" || content.case === "url") bytes += 2 * content.value.length;
    else if (content.case === "raw") bytes += content.value.byteLength;
    else bytes += 256; // structured data: a rough figure
    bytes += 48;
  }
  return bytes;
}
