import { TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { LoggedEvent } from "../../src/lifecycle/ports/event-log.js";
import { EventRing } from "../../src/storage/memory/event-ring.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { Clock, artifactChange, artifactTexts, newTask, scopeOf, statusChange, textArtifact } from "../support/tasks.js";

function chunk(taskId: string, version: number, bytes: number): LoggedEvent {
  const part = {
    $typeName: "lf.a2a.v1.Part",
    content: { case: "text", value: "x".repeat(bytes / 2) },
    filename: "",
    mediaType: "",
    metadata: undefined,
  } as never;
  const artifact = { $typeName: "lf.a2a.v1.Artifact", artifactId: "a", name: "", description: "", parts: [part], metadata: undefined, extensions: [] } as never;
  return { kind: "artifact", version, taskId, contextId: "c", artifact, append: false, lastChunk: false };
}

test("A-33: the memory event log stays within its byte cap whatever is written, keeping the newest events", () => {
  const ring = new EventRing({ retentionMs: 60_000, maxBytes: 1024 * 1024 });
  for (let v = 2; v <= 201; v++) ring.record(chunk("t", v, 64 * 1024));
  expect(ring.bytes).toBeLessThanOrEqual(1024 * 1024);
  expect(ring.size).toBeGreaterThan(0);
  expect(ring.after("t", 1, 201)).toBeUndefined(); // the start is gone: expired
  const kept = ring.after("t", 201 - ring.size, 201)!;
  expect(kept.map((e) => e.version)).toEqual(Array.from({ length: ring.size }, (_, i) => 202 - ring.size + i));
});

test("A-33: the memory event log drops the oldest events of all tasks past its event cap, and tells a gap from a whole log", () => {
  const ring = new EventRing({ retentionMs: 60_000, maxEvents: 5 });
  for (let v = 2; v <= 4; v++) ring.record(chunk("a", v, 10));
  for (let v = 2; v <= 5; v++) ring.record(chunk("b", v, 10));
  expect(ring.size).toBe(5);
  expect(ring.after("a", 1, 4)).toBeUndefined(); // a's oldest two went first
  expect(ring.after("a", 3, 4)!.map((e) => e.version)).toEqual([4]);
  expect(ring.after("b", 1, 5)!.map((e) => e.version)).toEqual([2, 3, 4, 5]);
  expect(ring.after("b", 5, 5)).toEqual([]);
  expect(ring.after("b", 6, 5)).toBeUndefined(); // ahead of the task
});

test("A-33: events past the retention window are expired", () => {
  let now = 1_000;
  const ring = new EventRing({ retentionMs: 100 }, () => now);
  ring.record(chunk("t", 2, 10));
  now = 1_050;
  ring.record(chunk("t", 3, 10));
  now = 1_120;
  expect(ring.after("t", 1, 3)).toBeUndefined();
  expect(ring.after("t", 2, 3)!.map((e) => e.version)).toEqual([3]);
});

test("A-33: the memory log reads back every streamed chunk as written (kept as where its part is in the task): while running, after its artifact is replaced, and once the task is packed", async () => {
  const repo = new MemoryTaskRepository({ eventLog: { retentionMs: 60_000 } });
  const clock = new Clock();
  const scope = scopeOf("tenant", "alice");
  const { task } = await repo.create(scope, newTask({ micros: clock.next(), text: "go" }));
  let v = await repo.update(scope, task.id, 1, statusChange(TaskState.WORKING, clock.next()));
  const written: string[] = [];
  const write = async (artifactId: string, text: string, append: boolean) => {
    v = await repo.update(scope, task.id, v, artifactChange(textArtifact(artifactId, text), append, false));
    written.push(`${v} ${artifactId} ${text}${append ? " +" : ""}`);
  };
  for (let i = 0; i < 5; i++) await write("out", `c${i}`, i > 0);
  await write("side", "s0", false);
  await write("out", "c5", true);
  await write("side", "s1", true);
  const readBack = async () => {
    const read = await repo.eventLog!.readAfter(scope, task.id, 2);
    if (read.kind !== "events") throw new Error(read.kind);
    return read.events.map((e) =>
      e.kind === "artifact" ? `${e.version} ${e.artifact.artifactId} ${artifactTexts(e.artifact).join(",")}${e.append ? " +" : ""}` : `${e.version} ${e.kind}`,
    );
  };
  expect(await readBack()).toEqual(written);
  await write("out", "r0", false); // the task no longer holds c0..c5
  await write("out", "r1", true);
  expect(await readBack()).toEqual(written);
  await repo.update(scope, task.id, v, statusChange(TaskState.COMPLETED, clock.next())); // packed off the heap
  expect((await readBack()).slice(0, -1)).toEqual(written);
});
