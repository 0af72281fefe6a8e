import { create } from "@bufbuild/protobuf";
import { ArtifactSchema, MessageSchema, PartSchema, TaskState, TaskStatusSchema, type Artifact } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { LoggedEvent } from "../../src/lifecycle/ports/event-log.js";
import { decodeArtifactChanges, decodeEventRow, encodeArtifactChanges, encodeEvent, encodeEventBatch } from "../../src/storage/sqlite/event-row-codec.js";

/**
 * Issue 15 item 5: a burst's artifact chunks are framed for their `artifact_tail` and
 * `task_events` rows with one encode per commit instead of one per chunk. The bytes must be the
 * ones framing each event by itself gave (migration 6's BATCH format), so rows written before
 * and after read the same.
 */

/** Byte equality without an element-by-element diff of large arrays. */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** The BATCH framing, one event at a time: kind, flags, body length + 1 as a varint, body. */
function framedOneByOne(events: readonly LoggedEvent[]): Uint8Array {
  const bytes: number[] = [];
  for (const event of events) {
    const [kind, flags, body] = encodeEvent(event);
    bytes.push(kind, flags);
    let n = body === null ? 0 : body.length + 1;
    while (n > 0x7f) {
      bytes.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    bytes.push(n);
    if (body !== null) for (const b of body) bytes.push(b);
  }
  return Uint8Array.from(bytes);
}

/** Chunks of every shape the encoder writes: short and long (multi-byte lengths), non-ASCII, raw, empty, with metadata. */
function artifactOf(i: number): Artifact {
  const text = i % 7 === 0 ? "é🙂".repeat(i) : i % 25 === 5 ? "x".repeat(200 + i * 97) : `#seq=${i};`;
  return create(ArtifactSchema, {
    artifactId: i % 3 === 0 ? "" : "out",
    name: i % 4 === 0 ? "answer" : "",
    parts:
      i % 6 === 0
        ? []
        : [
            create(PartSchema, { content: { case: "text", value: text } }),
            ...(i % 4 === 1 ? [create(PartSchema, { content: { case: "raw", value: new Uint8Array(i * 3).fill(i) }, mediaType: "a/b" })] : []),
          ],
    metadata: i % 8 === 3 ? { seq: i, tag: "m" } : undefined,
    extensions: i % 9 === 2 ? ["urn:x"] : [],
  });
}

const ids = { taskId: "task-1", contextId: "ctx-1" };
const artifactEvent = (i: number): LoggedEvent => ({
  kind: "artifact",
  version: i + 1,
  ...ids,
  artifact: artifactOf(i),
  append: i % 2 === 1,
  lastChunk: i % 10 === 9,
});

test("issue 15 item 5: artifact changes framed together give the bytes of framing each alone, and decode back", () => {
  for (const n of [1, 2, 17, 300]) {
    const events = Array.from({ length: n }, (_, i) => artifactEvent(i));
    const changes = events
      .map((e) => e as Extract<LoggedEvent, { kind: "artifact" }>)
      .map(({ artifact, append, lastChunk }) => ({ kind: "artifact" as const, artifact, append, lastChunk }));
    const expected = framedOneByOne(events);
    expect(same(encodeArtifactChanges(changes), expected)).toBe(true);
    expect(same(encodeEventBatch(events), expected)).toBe(true);
    const decoded = decodeArtifactChanges(encodeArtifactChanges(changes));
    expect(decoded.map((c) => [c.artifact.artifactId, c.artifact.parts.length, c.append, c.lastChunk])).toEqual(
      changes.map((c) => [c.artifact.artifactId, c.artifact.parts.length, c.append, c.lastChunk]),
    );
  }
});

test("issue 15 item 5: an event batch mixing status, history and runs of artifact events keeps the per-event bytes and order", () => {
  const status = (v: number, state: TaskState): LoggedEvent => ({ kind: "status", version: v, ...ids, status: create(TaskStatusSchema, { state }) });
  const history = (v: number): LoggedEvent => ({ kind: "history", version: v, ...ids, message: create(MessageSchema, { messageId: `m${v}` }) });
  const events: LoggedEvent[] = [status(1, TaskState.WORKING), history(2)];
  for (let i = 0; i < 40; i++) events.push({ ...artifactEvent(i), version: events.length + 1 });
  events.push(status(events.length + 1, TaskState.INPUT_REQUIRED));
  for (let i = 40; i < 45; i++) events.push({ ...artifactEvent(i), version: events.length + 1 });
  events.push(status(events.length + 1, TaskState.COMPLETED));
  const body = encodeEventBatch(events);
  expect(same(body, framedOneByOne(events))).toBe(true);
  const row = { version: events.length, first_version: 1, kind: 4, flags: 0, body };
  expect(decodeEventRow(row, ids.taskId, ids.contextId).map((e) => `${e.version}:${e.kind}`)).toEqual(events.map((e) => `${e.version}:${e.kind}`));
});
