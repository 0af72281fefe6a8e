import { describe, expect, it } from "@jest/globals";
import { create, toBinary } from "@bufbuild/protobuf";
import { ArtifactSchema, MessageSchema, TaskSchema, TaskState, TaskStatusSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { decodeArtifacts, decodeMessage, decodeTaskCore, encodeArtifacts, encodeMessage, encodeTaskCore } from "../../src/storage/sqlite/task-row-codec.js";
import { at, hex, message, textPart } from "../codec/support.js";

/*
 * The SQLite rows are written by the static encoder; their bytes must stay exactly what
 * protobuf-es wrote before (rows already on disk are read back either way).
 */
describe("SQLite row codec", () => {
  const status = create(TaskStatusSchema, {
    state: TaskState.INPUT_REQUIRED,
    message: message({ parts: [textPart("which one?")] }),
    timestamp: at(1_700_000_000n, 5),
  });
  const artifacts = [
    create(ArtifactSchema, { artifactId: "a1", name: "answer", parts: [textPart("4"), textPart("é😀")] }),
    create(ArtifactSchema, { artifactId: "a2" }),
  ];
  const task = create(TaskSchema, {
    id: "t-1",
    contextId: "c-1",
    status,
    artifacts,
    history: [message(), message({ messageId: "m-2" })],
    metadata: { k: [1, "two", null, { x: true }] },
  });

  it("R-TASK: the task row holds id, context, status and metadata, in protobuf-es's bytes", () => {
    const expected = toBinary(TaskSchema, create(TaskSchema, { id: task.id, contextId: task.contextId, status: task.status, metadata: task.metadata }));
    expect(hex(encodeTaskCore(task))).toBe(hex(expected));
    const back = decodeTaskCore(encodeTaskCore(task));
    expect(back.history).toEqual([]);
    expect(back.artifacts).toEqual([]);
    expect(back.status?.message?.parts[0]?.content.value).toBe("which one?");
  });

  it("R-ART: artifacts are one blob in protobuf-es's bytes, none is null", () => {
    expect(hex(encodeArtifacts(artifacts)!)).toBe(hex(toBinary(TaskSchema, create(TaskSchema, { artifacts }))));
    expect(decodeArtifacts(encodeArtifacts(artifacts))).toEqual(artifacts);
    expect(encodeArtifacts([])).toBeNull();
  });

  it("R-HIST: each history message is its own blob in protobuf-es's bytes", () => {
    for (const m of task.history) {
      expect(hex(encodeMessage(m))).toBe(hex(toBinary(MessageSchema, m)));
      expect(decodeMessage(encodeMessage(m))).toEqual(m);
    }
  });
});
