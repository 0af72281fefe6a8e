import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  A2AService,
  ArtifactSchema,
  MessageSchema,
  Role,
  SendMessageResponseSchema,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  type Message,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { sealForReply, sealedEncoding } from "../../src/lifecycle/task-encoding.js";
import { createServiceDefinition } from "../../src/protocol/grpc-adapter.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";

/*
 * Blocking replies reuse the bytes the memory store packed a settled task into, instead of
 * encoding it again. These tests prove the bytes sent are exactly what encoding would give,
 * and that a re-shaped or changed task never goes out as stale bytes.
 */

const scope = { tenant: "", principal: "anonymous" };
const definition = createServiceDefinition(A2AService);
const serializeSend = definition["SendMessage"]!.responseSerialize as (m: unknown) => Buffer;
const serializeTask = definition["GetTask"]!.responseSerialize as (m: unknown) => Buffer;

let micros = 1_750_000_000_000_000;
const ts = () => {
  micros += 1000;
  return create(TimestampSchema, { seconds: BigInt(Math.floor(micros / 1e6)), nanos: (micros % 1e6) * 1000 });
};
const text = (value: string, role = Role.AGENT): Message =>
  create(MessageSchema, { messageId: `m-${value}`, role, parts: [{ content: { case: "text", value } }] });

/** A task taken to COMPLETED through the store; `statusText` makes the final status carry a message. */
async function completedTask(repo: MemoryTaskRepository, id: string, statusText?: string): Promise<void> {
  await repo.create(scope, create(TaskSchema, { id, contextId: `ctx-${id}`, status: { state: TaskState.SUBMITTED, timestamp: ts() }, history: [text("q", Role.USER)], metadata: { n: 1 } }));
  await repo.update(scope, id, 1, { kind: "status", status: create(TaskStatusSchema, { state: TaskState.WORKING, timestamp: ts() }) });
  const artifact = create(ArtifactSchema, { artifactId: "a", name: "answer", parts: [{ content: { case: "text", value: "4" } }] });
  await repo.update(scope, id, 2, { kind: "artifact", artifact, append: false, lastChunk: false });
  const message = statusText === undefined ? undefined : text(statusText);
  await repo.update(scope, id, 3, { kind: "status", status: create(TaskStatusSchema, { state: TaskState.COMPLETED, timestamp: ts(), message }) });
}

const sendReply = (task: Task) => create(SendMessageResponseSchema, { payload: { case: "task", value: task } });

describe("reply bytes reused from the memory store", () => {
  it("a settled task read whole and sealed goes out as exactly the bytes encoding would give", async () => {
    const repo = new MemoryTaskRepository();
    await completedTask(repo, "t1");
    const task = sealForReply((await repo.get(scope, "t1"))!.task);
    expect(sealedEncoding(task)).toBeDefined();
    expect(Buffer.compare(serializeTask(task), Buffer.from(toBinary(TaskSchema, task)))).toBe(0);
    const reply = sendReply(task);
    const bytes = serializeSend(reply);
    expect(Buffer.compare(bytes, Buffer.from(toBinary(SendMessageResponseSchema, reply)))).toBe(0);
    expect(fromBinary(SendMessageResponseSchema, bytes).payload.value).toEqual(task);
  });

  it("a sealed task cannot be changed any more", async () => {
    const repo = new MemoryTaskRepository();
    await completedTask(repo, "t2");
    const task = sealForReply((await repo.get(scope, "t2"))!.task);
    expect(() => {
      task.status!.state = TaskState.FAILED;
    }).toThrow(TypeError);
    expect(() => task.history.push(text("late"))).toThrow(TypeError);
    expect(() => {
      task.artifacts[0]!.parts[0]!.content = { case: "text", value: "5" };
    }).toThrow(TypeError);
  });

  it("R-HIST: a task read with history_length that cuts history has no stored bytes, and encodes as trimmed", async () => {
    const repo = new MemoryTaskRepository();
    await completedTask(repo, "t3", "done");
    const task = sealForReply((await repo.get(scope, "t3", { historyLength: 1 }))!.task);
    expect(task.history).toHaveLength(1);
    expect(sealedEncoding(task)).toBeUndefined();
    expect(Buffer.compare(serializeSend(sendReply(task)), Buffer.from(toBinary(SendMessageResponseSchema, sendReply(task))))).toBe(0);
  });

  it("a history_length that cuts nothing keeps the bytes (the task is unchanged)", async () => {
    const repo = new MemoryTaskRepository();
    await completedTask(repo, "t4");
    const task = sealForReply((await repo.get(scope, "t4", { historyLength: 10 }))!.task);
    expect(sealedEncoding(task)).toBeDefined();
    expect(Buffer.compare(serializeTask(task), Buffer.from(toBinary(TaskSchema, task)))).toBe(0);
  });

  it("a task changed before it is sealed, or never sealed, or copied, is encoded from the object", async () => {
    const repo = new MemoryTaskRepository();
    await completedTask(repo, "t5");
    const unsealed = (await repo.get(scope, "t5"))!.task;
    unsealed.status!.state = TaskState.FAILED;
    expect(sealedEncoding(unsealed)).toBeUndefined();
    expect(fromBinary(TaskSchema, serializeTask(unsealed)).status?.state).toBe(TaskState.FAILED);

    const sealed = sealForReply((await repo.get(scope, "t5"))!.task);
    const copy = create(TaskSchema, { ...sealed, history: [] });
    expect(sealedEncoding(copy)).toBeUndefined();
    expect(fromBinary(TaskSchema, serializeTask(copy)).history).toEqual([]);
  });

  it("a task whose status message is kept once in history (packed without it) is encoded as usual, whole", async () => {
    const repo = new MemoryTaskRepository();
    await completedTask(repo, "t6", "done");
    const task = sealForReply((await repo.get(scope, "t6"))!.task);
    expect(sealedEncoding(task)).toBeUndefined();
    expect(fromBinary(TaskSchema, serializeTask(task)).status?.message?.parts[0]?.content.value).toBe("done");
  });

  it("tasks of other replies (not from a store read) are encoded as usual", () => {
    const task = create(TaskSchema, { id: "x", status: { state: TaskState.WORKING } });
    expect(sealForReply(task)).toBe(task);
    expect(Object.isFrozen(task)).toBe(false);
    expect(Buffer.compare(serializeSend(sendReply(task)), Buffer.from(toBinary(SendMessageResponseSchema, sendReply(task))))).toBe(0);
  });

  it("the first read right after a task settles (handed the object it was packed from) equals a later read decoded from storage", async () => {
    for (const statusText of [undefined, "done"]) {
      const repo = new MemoryTaskRepository();
      await completedTask(repo, "t7", statusText);
      const first = (await repo.get(scope, "t7"))!.task;
      await new Promise((resolve) => setImmediate(resolve));
      const later = (await repo.get(scope, "t7"))!.task;
      expect(first).toEqual(later);
      expect(Buffer.compare(Buffer.from(toBinary(TaskSchema, first)), Buffer.from(toBinary(TaskSchema, later)))).toBe(0);
      if (statusText !== undefined) expect(first.status!.message).not.toBe(first.history[first.history.length - 1]);
      // The caller owns what it was handed: changing it changes nothing stored.
      first.history.length = 0;
      first.status!.state = TaskState.FAILED;
      expect((await repo.get(scope, "t7"))!.task).toEqual(later);
    }
  });
});
