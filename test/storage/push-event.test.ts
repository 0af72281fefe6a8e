/**
 * The outbox event of a write is encoded by the static encoders from a plain event object:
 * it must be the bytes protobuf-es's toBinary gives for the StreamResponse, or a webhook body
 * (decoded from them) would differ.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskChange } from "../../src/lifecycle/ports/task-repository.js";
import { pushEventOf, pushSnapshotOf } from "../../src/storage/push-event.js";
import { Clock, artifactChange, newTask, statusChange, textArtifact } from "../support/tasks.js";

const clock = new Clock();
const reference = (taskId: string, contextId: string, change: TaskChange) => {
  if (change.kind === "status")
    return toBinary(
      StreamResponseSchema,
      create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId, contextId, status: change.status } } }),
    );
  if (change.kind !== "artifact") throw new Error("no event");
  const { artifact, append, lastChunk } = change;
  return toBinary(
    StreamResponseSchema,
    create(StreamResponseSchema, { payload: { case: "artifactUpdate", value: { taskId, contextId, artifact, append, lastChunk } } }),
  );
};

test.each<[string, TaskChange]>([
  ["a status without a message", statusChange(TaskState.WORKING, clock.next())],
  ["a status with the agent's message", statusChange(TaskState.INPUT_REQUIRED, clock.next(), "more, with ünïcode ✓")],
  ["an artifact", artifactChange(textArtifact("a1", "part one"))],
  ["an appended last chunk", artifactChange(textArtifact("a1", "part two"), true, true)],
  ["an appended chunk, not the last", artifactChange(textArtifact("a2", ""), true, false)],
])("A-10: the outbox event of %s is toBinary's StreamResponse, byte for byte", (_name, change) => {
  expect(Buffer.from(pushEventOf("task-1", "ctx-1", change)!)).toEqual(Buffer.from(reference("task-1", "ctx-1", change)));
});

test("A-10: a history write has no event; the snapshot is toBinary's StreamResponse of the task", () => {
  expect(pushEventOf("task-1", "ctx-1", { kind: "history", message: undefined } as unknown as TaskChange)).toBeUndefined();
  const task: Task = newTask({ id: "task-1", contextId: "ctx-1", micros: clock.next() });
  task.artifacts.push(textArtifact("a1", "x"));
  expect(Buffer.from(pushSnapshotOf(task))).toEqual(
    Buffer.from(toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: task } }))),
  );
});
