import type { JsonObject } from "@bufbuild/protobuf";
import type { Part, StreamResponse, TaskArtifactUpdateEvent, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { approximatePartsSize } from "../codec/stream-response-encoder.js";
import { artifactLiteral, artifactUpdateLiteral, streamResponseLiteral } from "../lifecycle/index.js";

const OTHER = 0;
const STATUS = 1;
const ARTIFACT = 2;

/** Appends merged into one artifact update: the parts in order, and what the last of them said. */
interface ArtifactMerge {
  /** The update that opened the entry (append=true) or the replacing one (append=false): id, name, description, append. */
  readonly base: TaskArtifactUpdateEvent;
  /** The entry's own list: appends push onto it, never copying what it holds. */
  readonly parts: Part[];
  metadata: JsonObject | undefined;
  extensions: string[];
  lastChunk: boolean;
  /** The last update's event metadata (it carries the resume cursor, A-33). */
  eventMetadata: JsonObject | undefined;
}

interface Entry {
  kind: typeof OTHER | typeof STATUS | typeof ARTIFACT;
  /** The response as published, or undefined once appends were merged into it (see `merge`). */
  response: StreamResponse | undefined;
  merge: ArtifactMerge | undefined;
  /** STATUS: the state; ARTIFACT: unused. */
  state: TaskState | undefined;
  /** ARTIFACT: the artifact's id. */
  artifactId: string;
  /** About the encoded size of the entry's one response: merged appends add their parts, not another envelope each. */
  bytes: number;
  /** Events that went into the entry. */
  events: number;
}

/** What a backlog gives back to be written: one response, standing for `events` published ones. */
export interface BacklogItem {
  readonly response: StreamResponse;
  readonly events: number;
}

/**
 * What waits for one stream that cannot write, merged without loss (ruling A-32):
 *
 * - appends to an artifact join the queued update of that artifact (parts in order, `last_chunk`,
 *   artifact metadata and event metadata of the last, extensions united), so a replacing update
 *   followed by appends stays one replacing update;
 * - an update with append=false takes the place of the queued update of its artifact (it
 *   replaces the artifact whole, so what was queued for it cannot matter any more);
 * - a status update that keeps the state of the status update queued last replaces it.
 *
 * An artifact update looks back past queued updates of other artifacts, never past a status
 * update or the task: applying the merged responses to the task a client holds gives the task
 * that applying every published one gives (the order of a task's artifacts is the order of
 * their first update, which merging keeps), and every state change stays, in order.
 * Status messages of collapsed updates are not delivered; they stay in the task's history
 * (spec §7 does not promise their delivery).
 */
export class StreamBacklog {
  /** `maxEntryBytes`: appends stop merging into an entry this large (a response must stay under the message size limit). */
  constructor(private readonly maxEntryBytes = Infinity) {}

  private entries: Entry[] = [];
  private head = 0;
  /** Sum of the entries' bytes. */
  bytes = 0;

  get size(): number {
    return this.entries.length - this.head;
  }

  /**
   * Queues `response` (`bytes`: its encoded size), merged into what waits where A-32 allows.
   * The backlog's bytes are what its merged responses will encode to: an append merged into a
   * queued update adds its parts (A-32 budgets the merged backlog). Why: counting each append's
   * envelope (task, context and artifact ids, ~100 bytes) as well tripled the weight of a burst of
   * short chunks, and a client reading as fast as it could was cut by a 100,000-chunk burst.
   */
  push(response: StreamResponse, bytes: number): void {
    const { payload } = response;
    if (payload.case === "artifactUpdate") {
      const update = payload.value;
      const artifactId = update.artifact?.artifactId ?? "";
      let target = this.queuedArtifact(artifactId);
      const grows = update.append && target !== undefined ? Math.min(bytes, approximatePartsSize(update.artifact?.parts ?? []) ?? bytes) : bytes;
      if (target !== undefined && update.append && target.bytes + grows > this.maxEntryBytes) target = undefined;
      if (target === undefined) {
        this.bytes += bytes;
        this.entries.push({ kind: ARTIFACT, response, merge: undefined, state: undefined, artifactId, bytes, events: 1 });
      } else if (!update.append) {
        this.bytes += bytes - target.bytes;
        target.response = response;
        target.merge = undefined;
        target.bytes = bytes;
        target.events++;
      } else {
        appendTo(target, update);
        this.bytes += grows;
        target.bytes += grows;
        target.events++;
      }
      return;
    }
    this.bytes += bytes;
    if (payload.case === "statusUpdate") {
      const state = payload.value.status?.state;
      const tail = this.size > 0 ? this.entries[this.entries.length - 1]! : undefined;
      if (tail !== undefined && tail.kind === STATUS && tail.state === state) {
        this.bytes -= tail.bytes;
        tail.response = response;
        tail.bytes = bytes;
        tail.events++;
        return;
      }
      this.entries.push({ kind: STATUS, response, merge: undefined, state, artifactId: "", bytes, events: 1 });
      return;
    }
    this.entries.push({ kind: OTHER, response, merge: undefined, state: undefined, artifactId: "", bytes, events: 1 });
  }

  /** The oldest entry as one response, taken off the backlog; undefined when empty. */
  shift(): BacklogItem | undefined {
    if (this.head === this.entries.length) return undefined;
    const entry = this.entries[this.head]!;
    this.entries[this.head++] = undefined!;
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    this.bytes -= entry.bytes;
    return { response: entry.response ?? mergedResponse(entry.merge!), events: entry.events };
  }

  /** Drops everything queued. */
  clear(): void {
    this.entries = [];
    this.head = 0;
    this.bytes = 0;
  }

  /** The queued update of `artifactId` that a new update of it may merge into: looking back past other artifacts only. */
  private queuedArtifact(artifactId: string): Entry | undefined {
    for (let i = this.entries.length - 1; i >= this.head; i--) {
      const entry = this.entries[i]!;
      if (entry.kind !== ARTIFACT) return undefined;
      if (entry.artifactId === artifactId) return entry;
    }
    return undefined;
  }
}

function appendTo(entry: Entry, update: TaskArtifactUpdateEvent): void {
  let merge = entry.merge;
  if (merge === undefined) {
    const base = entry.response!.payload.value as TaskArtifactUpdateEvent;
    const artifact = base.artifact!;
    merge = entry.merge = {
      base,
      parts: artifact.parts.slice(),
      metadata: artifact.metadata,
      extensions: artifact.extensions,
      lastChunk: base.lastChunk,
      eventMetadata: base.metadata,
    };
    entry.response = undefined;
  }
  const artifact = update.artifact!;
  const parts = artifact.parts;
  for (let i = 0; i < parts.length; i++) merge.parts.push(parts[i]!);
  // As the task's own artifact is merged (task-change.ts): the newer metadata wins, extensions are united.
  if (artifact.metadata !== undefined) merge.metadata = artifact.metadata;
  if (artifact.extensions.length > 0) merge.extensions = [...new Set([...merge.extensions, ...artifact.extensions])];
  merge.lastChunk = update.lastChunk;
  merge.eventMetadata = update.metadata;
}

function mergedResponse(merge: ArtifactMerge): StreamResponse {
  const { base } = merge;
  const first = base.artifact!;
  const artifact = artifactLiteral({
    artifactId: first.artifactId,
    name: first.name,
    description: first.description,
    parts: merge.parts,
    metadata: merge.metadata,
    extensions: merge.extensions,
  });
  const update = artifactUpdateLiteral(base.taskId, base.contextId, artifact, base.append, merge.lastChunk);
  update.metadata = merge.eventMetadata;
  return streamResponseLiteral({ case: "artifactUpdate", value: update });
}
