import { describe, expect, it } from "@jest/globals";
import { clone, create, equals } from "@bufbuild/protobuf";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  Role,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  type Message,
  type Task,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ByteSlabs } from "../../../src/storage/memory/byte-slabs.js";
import { packTask, unpackTask } from "../../../src/storage/memory/packed-task.js";

const text = (value: string, role: Role, taskId: string, contextId: string, messageId = value): Message =>
  create(MessageSchema, { messageId, role, taskId, contextId, parts: [create(PartSchema, { content: { case: "text", value } })] });

function task(history: Message[], statusMessage?: Message): Task {
  return create(TaskSchema, {
    id: "task-1",
    contextId: "ctx-1",
    status: create(TaskStatusSchema, { state: TaskState.COMPLETED, message: statusMessage }),
    history,
    artifacts: [create(ArtifactSchema, { artifactId: "a", parts: [create(PartSchema, { content: { case: "text", value: "4" } })] })],
  });
}

function roundTrip(t: Task): { back: Task; bytes: number } {
  const slabs = new ByteSlabs();
  const before = clone(TaskSchema, t);
  const address = packTask(slabs, t);
  expect(equals(TaskSchema, t, before)).toBe(true); // packing never changes the caller's task
  return { back: unpackTask(slabs, address, t.id, t.contextId), bytes: slabs.copy(address).byteLength };
}

describe("packed tasks: what the store already knows is left out, and every task reads back exactly", () => {
  const user = text("What is 2 + 2?", Role.USER, "task-1", "ctx-1");
  const agent = text("4", Role.AGENT, "task-1", "ctx-1");

  it("R-TASK-1: messages naming their own task lose their ids in the bytes and get them back", () => {
    const t = task([user, agent], agent);
    const { back, bytes } = roundTrip(t);
    expect(equals(TaskSchema, back, t)).toBe(true);
    expect(back.status?.message).not.toBe(back.history[1]); // two objects, as a decoded copy has
    // As small as the same task whose messages carry no ids at all.
    const bare = text("4", Role.AGENT, "", "");
    expect(bytes).toBe(roundTrip(task([text("What is 2 + 2?", Role.USER, "", ""), bare], bare)).bytes);
  });

  it("R-TASK-1: messages with other, partial or no ids are kept as they are", () => {
    const cases = [
      task([user, text("x", Role.USER, "other-task", "ctx-1")]),
      task([user, text("y", Role.USER, "task-1", "")]),
      task([text("z", Role.USER, "", "")]),
      task([user], text("status only", Role.AGENT, "task-1", "other-ctx")),
      task([user, agent], text("not the last entry", Role.AGENT, "task-1", "ctx-1")),
      task([]),
    ];
    for (const t of cases) expect(equals(TaskSchema, roundTrip(t).back, t)).toBe(true);
  });
});
