import { describe, expect, it } from "@jest/globals";
import { create, equals, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  Role,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  TaskStatusUpdateEventSchema,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import {
  agentMessageLiteral,
  artifactLiteral,
  artifactUpdateLiteral,
  newTaskLiteral,
  sendMessageResponseLiteral,
  statusUpdateLiteral,
  streamResponseLiteral,
  taskStatusLiteral,
  textPartLiteral,
  timestampLiteral,
} from "../../src/lifecycle/model/message-literals.js";

/** Same message as create() makes: equal by the schema, same bytes, and no field create() would not set. */
function expectSameAsCreate<D extends DescMessage>(schema: D, literal: MessageShape<D>, made: MessageShape<D>): void {
  expect(literal.$typeName).toBe(schema.typeName);
  expect(equals(schema, literal, made)).toBe(true);
  expect(toBinary(schema, literal)).toEqual(toBinary(schema, made));
  const defined = (m: object) =>
    Object.keys(m)
      .filter((k) => (m as Record<string, unknown>)[k] !== undefined)
      .sort();
  expect(defined(literal)).toEqual(defined(made));
}

describe("message literals build what protobuf-es create() builds", () => {
  const ts = timestampLiteral(1_700_000_000n, 123_000);
  const part = textPartLiteral("hello");
  const message = agentMessageLiteral("m-1", "ctx", "task", [part]);
  const status = taskStatusLiteral(TaskState.WORKING, message, ts);
  const artifact = artifactLiteral({ artifactId: "a", name: "n", description: "", parts: [part], metadata: { k: 1 }, extensions: ["e"] });

  it("Timestamp, Part, Message, TaskStatus, Artifact", () => {
    expectSameAsCreate(TimestampSchema, ts, create(TimestampSchema, { seconds: 1_700_000_000n, nanos: 123_000 }));
    expectSameAsCreate(PartSchema, part, create(PartSchema, { content: { case: "text", value: "hello" } }));
    expectSameAsCreate(MessageSchema, message, create(MessageSchema, { messageId: "m-1", contextId: "ctx", taskId: "task", role: Role.AGENT, parts: [part] }));
    expectSameAsCreate(TaskStatusSchema, status, create(TaskStatusSchema, { state: TaskState.WORKING, message, timestamp: ts }));
    expectSameAsCreate(
      TaskStatusSchema,
      taskStatusLiteral(TaskState.SUBMITTED, undefined, ts),
      create(TaskStatusSchema, { state: TaskState.SUBMITTED, timestamp: ts }),
    );
    expectSameAsCreate(ArtifactSchema, artifact, create(ArtifactSchema, { artifactId: "a", name: "n", parts: [part], metadata: { k: 1 }, extensions: ["e"] }));
  });

  it("Task, responses and update events", () => {
    expectSameAsCreate(
      TaskSchema,
      newTaskLiteral("t", "ctx", status, [message]),
      create(TaskSchema, { id: "t", contextId: "ctx", status, history: [message] }),
    );
    const task = create(TaskSchema, { id: "t" });
    expectSameAsCreate(
      SendMessageResponseSchema,
      sendMessageResponseLiteral({ case: "task", value: task }),
      create(SendMessageResponseSchema, { payload: { case: "task", value: task } }),
    );
    const update = statusUpdateLiteral("t", "ctx", status);
    expectSameAsCreate(TaskStatusUpdateEventSchema, update, create(TaskStatusUpdateEventSchema, { taskId: "t", contextId: "ctx", status }));
    const chunk = artifactUpdateLiteral("t", "ctx", artifact, true, false);
    expectSameAsCreate(TaskArtifactUpdateEventSchema, chunk, create(TaskArtifactUpdateEventSchema, { taskId: "t", contextId: "ctx", artifact, append: true }));
    expectSameAsCreate(
      StreamResponseSchema,
      streamResponseLiteral({ case: "statusUpdate", value: update }),
      create(StreamResponseSchema, { payload: { case: "statusUpdate", value: update } }),
    );
  });
});
