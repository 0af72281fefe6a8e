import { afterEach, describe, expect, it } from "@jest/globals";
import { create, toBinary, type JsonObject, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import { configureTextEncoding, getTextEncoding, WireType } from "@bufbuild/protobuf/wire";
import { ListValueSchema, NullValue, StructSchema, TimestampSchema, ValueSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  type Role,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  type Task,
  TaskArtifactUpdateEventSchema,
  TaskStatusUpdateEventSchema,
  type StreamResponse,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { installProtobufTextEncoding } from "../../src/protocol/protobuf-text-encoding.js";
import { encodeStreamResponse } from "../../src/codec/stream-response-encoder.js";
import {
  ENCODED_EVENT_FIELDS,
  ENCODED_FIELDS,
  encodeMessage,
  encodeMessagePayload,
  encodeTask,
  encodeTaskPayload,
  encodedArtifactSize,
  encodedTaskSize,
} from "../../src/codec/task-encoder.js";
import { RandomTasks } from "./random-tasks.js";
import { at, describeTree, hex, message, taskWith, textPart, unknown, value, withParts } from "./support.js";

const standardTextEncoding = getTextEncoding();
afterEach(() => configureTextEncoding(standardTextEncoding));

/** Byte equality, shown as hex so a failure points at the first differing byte. */
function expectSameBytes(task: Task): void {
  expect(hex(encodeTask(task))).toBe(hex(toBinary(TaskSchema, task)));
}

const lenUnknown = (no: number, text: string) => ({
  no,
  wireType: WireType.LengthDelimited,
  data: new Uint8Array([text.length, ...Buffer.from(text)]),
});
const withMetadata = (metadata: JsonObject) => taskWith({ metadata });

describe("encodeTask: a static encoder for lf.a2a.v1.Task, byte for byte protobuf-es's toBinary", () => {
  it("R-GEN-1: knows every field of every message reachable from Task (fails when the proto gains one)", () => {
    expect(describeTree(TaskSchema)).toEqual(ENCODED_FIELDS);
  });

  it("R-GEN-1: encodeTaskPayload gives the bytes of a SendMessageResponse and of a StreamResponse holding the task", () => {
    const random = new EncoderTasks(0x7a5c);
    for (const task of [taskWith({}), ...Array.from({ length: 200 }, () => random.task())]) {
      const payload = hex(encodeTaskPayload(task));
      expect(payload).toBe(hex(toBinary(SendMessageResponseSchema, create(SendMessageResponseSchema, { payload: { case: "task", value: task } }))));
      expect(payload).toBe(hex(toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: task } }))));
    }
  });

  it("R-GEN-1: encodeMessagePayload gives the bytes of a SendMessageResponse and of a StreamResponse holding the message", () => {
    const random = new EncoderTasks(0x3e11);
    const messages = [create(MessageSchema), message(), ...Array.from({ length: 200 }, () => random.task().history).flat()];
    expect(messages.length).toBeGreaterThan(100);
    for (const m of messages) {
      const payload = hex(encodeMessagePayload(m));
      expect(payload).toBe(hex(toBinary(SendMessageResponseSchema, create(SendMessageResponseSchema, { payload: { case: "message", value: m } }))));
      expect(payload).toBe(hex(toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "message", value: m } }))));
    }
  });

  it("R-GEN-1: encodeMessage gives the bytes of a Message alone, unknown fields and all", () => {
    const part = textPart("p");
    part.$unknown = [lenUnknown(15, "abc")];
    const msg = message({ parts: [part, textPart("é😀")], metadata: { k: [1, "two", null] }, extensions: ["urn:x"], referenceTaskIds: ["t-0"] });
    msg.$unknown = [lenUnknown(16, "m")];
    for (const m of [msg, create(MessageSchema), message()]) expect(hex(encodeMessage(m))).toBe(hex(toBinary(MessageSchema, m)));
  });

  it("R-GEN-1: an empty task is zero bytes, and scalars at their defaults are skipped", () => {
    expect(encodeTask(create(TaskSchema)).byteLength).toBe(0);
    expectSameBytes(taskWith({ id: "", status: create(TaskStatusSchema) }));
    expectSameBytes(taskWith({ status: create(TaskStatusSchema, { message: create(MessageSchema), timestamp: at(0n) }) }));
  });

  it("R-GEN-1: every case of Part.content, and a part with none", () => {
    const parts = [
      textPart("hello"),
      textPart(""),
      create(PartSchema, { content: { case: "raw", value: new Uint8Array([0, 1, 2, 255]) } }),
      create(PartSchema, { content: { case: "raw", value: new Uint8Array(0) } }),
      create(PartSchema, { content: { case: "url", value: "https://example.com/a.png" }, filename: "a.png", mediaType: "image/png" }),
      create(PartSchema, { content: { case: "url", value: "" } }),
      create(PartSchema, { content: { case: "data", value: create(ValueSchema) } }),
      create(PartSchema, { content: { case: "data", value: value({ case: "stringValue", value: "x" }) } }),
      create(PartSchema, { filename: "only-a-name.txt", metadata: { k: "v" } }),
    ];
    for (const part of parts) expectSameBytes(withParts(part));
    expectSameBytes(withParts(...parts));
  });

  it("R-GEN-1: bytes given as a view into a larger buffer, and long enough to need a 2-byte length", () => {
    const backing = new Uint8Array(600).map((_, i) => i & 0xff);
    expectSameBytes(withParts(create(PartSchema, { content: { case: "raw", value: backing.subarray(7, 307) } })));
  });

  it("R-GEN-1: non-ASCII, emoji and strings at the edges of the short-string path", () => {
    for (const text of [
      "héllo",
      "日本語のテキスト",
      "🎉 done 👍🏽",
      "a".repeat(127),
      "a".repeat(128),
      "a".repeat(126) + "é",
      "é".repeat(64),
      "\u0000\u007f\u0080",
    ]) {
      expectSameBytes(taskWith({ id: text, history: [message({ parts: [textPart(text)], extensions: [text, ""] })] }));
    }
  });

  it("R-GEN-1: lone surrogates are encoded as protobuf-es encodes them (U+FFFD with TextEncoder)", () => {
    for (const text of ["\ud800", "\udc00", "a\ud83d", "\ude00b", "\ude00\ud83d", "x".repeat(200) + "\ud800"]) {
      expectSameBytes(taskWith({ contextId: text, history: [message({ parts: [textPart(text)] })] }));
    }
  });

  it("R-GEN-1: the same bytes with the server's text encoding and with any other configured one", () => {
    const task = taskWith({ id: "ascii", contextId: "ünï \ud800 🎉", history: [message({ parts: [textPart("x".repeat(300))] })] });
    installProtobufTextEncoding();
    expectSameBytes(task);
    // An encoder that keeps lone surrogates (WTF-8): the static encoder follows the configuration.
    configureTextEncoding({ ...standardTextEncoding, encodeUtf8: wtf8 });
    expectSameBytes(task);
    expect(hex(encodeTask(task))).toContain("eda080"); // U+D800 as WTF-8
  });

  it("R-GEN-1: metadata Structs with nested lists, structs, null, booleans and odd numbers", () => {
    const metadata = {
      s: "text",
      n: 1.5,
      zero: 0,
      negativeZero: -0,
      nan: NaN,
      inf: Infinity,
      negInf: -Infinity,
      tiny: 5e-324,
      t: true,
      f: false,
      nil: null,
      list: [1, "two", null, false, [[], {}], { deep: { deeper: [-0] } }],
      empty: {},
      "": "empty key",
      "10": "integer-like keys come first, in numeric order",
      "2": "two",
    } as JsonObject;
    expectSameBytes(withMetadata(metadata));
    expectSameBytes(withMetadata({}));
    expectSameBytes(taskWith({ artifacts: [create(ArtifactSchema, { artifactId: "a", metadata, parts: [create(PartSchema, { metadata })] })] }));
    expectSameBytes(taskWith({ history: [message({ metadata })] }));
  });

  it("R-GEN-1: a Struct value that is not JSON (undefined) is an empty Value, as in protobuf-es", () => {
    expectSameBytes(withMetadata({ a: undefined, list: [undefined, 1] } as unknown as JsonObject));
  });

  it("R-GEN-1: Part.data as a Value message of every kind, nested, with unknown fields and an unknown NullValue", () => {
    const struct = create(StructSchema, {
      fields: {
        n: value({ case: "numberValue", value: -0 }),
        b: value({ case: "boolValue", value: false }),
        s: value({ case: "stringValue", value: "" }),
        nil: value({ case: "nullValue", value: NullValue.NULL_VALUE }),
        odd: value({ case: "nullValue", value: 7 as NullValue }),
        negative: value({ case: "nullValue", value: -1 as NullValue }),
        none: create(ValueSchema),
        list: value({ case: "listValue", value: create(ListValueSchema, { values: [value({ case: "numberValue", value: NaN }), create(ValueSchema)] }) }),
      },
    });
    struct.$unknown = [unknown(9, 1)];
    const data = value({ case: "structValue", value: struct });
    data.$unknown = [lenUnknown(20, "value")];
    expectSameBytes(withParts(create(PartSchema, { content: { case: "data", value: data } })));
  });

  it("R-GEN-1: enums with numbers the proto does not know, negative ones too", () => {
    for (const state of [9, 100, -1, 0x7fffffff, -0x80000000] as number[] as TaskState[]) {
      expectSameBytes(taskWith({ status: create(TaskStatusSchema, { state }), history: [message({ role: state as number as Role })] }));
    }
  });

  it("R-GEN-1: timestamps: zero, negative, beyond 32 bits, negative nanos", () => {
    for (const [seconds, nanos] of [
      [0n, 1],
      [1735689600n, 999999999],
      [-1n, 0],
      [2n ** 40n, -1],
      [-(2n ** 63n), 0],
      [2n ** 63n - 1n, 0],
      [0x80000000n, 5],
    ] as const) {
      expectSameBytes(taskWith({ status: create(TaskStatusSchema, { state: TaskState.COMPLETED, timestamp: at(seconds, nanos) }) }));
    }
  });

  it("R-GEN-1: $unknown fields on every message type are written after its own fields", () => {
    const ts = at(1n);
    ts.$unknown = [unknown(3, 1)];
    const part = textPart("p");
    part.$unknown = [unknown(100, 0x80, 0x01), lenUnknown(15, "abc")];
    const msg = message({ parts: [part] });
    msg.$unknown = [lenUnknown(16, "m")];
    const artifact = create(ArtifactSchema, { artifactId: "a", parts: [part] });
    artifact.$unknown = [unknown(2 ** 29 - 1, 0)];
    const status = create(TaskStatusSchema, { state: TaskState.WORKING, message: msg, timestamp: ts });
    status.$unknown = [{ no: 4, wireType: WireType.Bit32, data: new Uint8Array([1, 2, 3, 4]) }];
    const task = taskWith({ status, artifacts: [artifact], history: [msg] });
    task.$unknown = [unknown(7, 42), unknown(7, 43)];
    expectSameBytes(task);
  });

  it("R-GEN-1: a long history, and texts needing 3- and 4-byte lengths", () => {
    const history = Array.from({ length: 1000 }, (_, i) => message({ messageId: `m-${i}`, parts: [textPart(`text ${i}`)] }));
    expectSameBytes(taskWith({ history }));
    expectSameBytes(withParts(textPart("y".repeat(20_000))));
    expectSameBytes(taskWith({ artifacts: [create(ArtifactSchema, { artifactId: "big", parts: [textPart("z".repeat(3_000_000))] })] }));
    expectSameBytes(taskWith({ id: "after the big one" })); // the scratch buffer is reused after growing
  });

  it("R-GEN-1: values protobuf-es refuses to encode are refused too, and the next task encodes fine", () => {
    const bad = taskWith({ status: create(TaskStatusSchema, { state: 1.5 as TaskState }) });
    expect(() => toBinary(TaskSchema, bad)).toThrow();
    expect(() => encodeTask(bad)).toThrow();
    const badNanos = taskWith({ status: create(TaskStatusSchema, { timestamp: at(1n, 2 ** 31) }) });
    expect(() => toBinary(TaskSchema, badNanos)).toThrow();
    expect(() => encodeTask(badNanos)).toThrow();
    expectSameBytes(taskWith({ history: [message()] }));
  });

  it("R-GEN-1: results stay intact when later tasks are encoded (small ones share a chunk, large ones do not)", () => {
    const tasks = Array.from({ length: 300 }, (_, i) => taskWith({ id: `task-${i}`, history: [message({ parts: [textPart("x".repeat(i * 10))] })] }));
    const results = tasks.map(encodeTask);
    results.forEach((bytes, i) => expect(hex(bytes)).toBe(hex(toBinary(TaskSchema, tasks[i]!))));
  });

  it("R-GEN-1: 2,500 seeded random tasks, each byte-equal, with the standard and with the server's text encoding", () => {
    const random = new EncoderTasks(0x5eed);
    const tasks = Array.from({ length: 2500 }, () => random.task());
    for (const encoding of ["standard", "server"]) {
      if (encoding === "server") installProtobufTextEncoding();
      const mismatches = tasks.filter((task) => !Buffer.from(encodeTask(task)).equals(toBinary(TaskSchema, task)));
      expect({ encoding, mismatches: mismatches.length }).toEqual({ encoding, mismatches: 0 });
      if (mismatches.length > 0) expectSameBytes(mismatches[0]!); // shows where the first one differs
    }
  });
});

/** UTF-8 that writes a lone surrogate as its own 3 bytes instead of U+FFFD. */
function wtf8(text: string): Uint8Array<ArrayBuffer> {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
      i++;
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i));

/** Tasks with values at the edges of the wire format: lengths of 2 and 3 bytes, lone surrogates, 32-bit edges. */
class EncoderTasks extends RandomTasks {
  protected readonly enumEdges = [1000, -1, 0x7fffffff, -0x80000000];

  protected oddJsonValue(): JsonValue {
    return this.chance(0.1) ? (undefined as unknown as JsonValue) : this.number();
  }

  protected timestamp(): Timestamp {
    const seconds = this.pick([0n, 1n, 1735689600n + BigInt(this.int(1e6)), -1n, 2n ** 40n, -(2n ** 63n), 2n ** 63n - 1n, 0x7fffffffn, 0x80000000n]);
    const nanos = this.pick([0, 1, this.int(1e9), 999_999_999, -1, 0x7fffffff, -0x80000000]);
    return create(TimestampSchema, { seconds, nanos });
  }

  protected unknownField(): UnknownField {
    return this.chance(0.5)
      ? unknown(this.pick([9, 15, 16, 100, 2 ** 29 - 1]), this.int(128))
      : lenUnknown(
          this.pick([10, 20, 3000]),
          this.string()
            .slice(0, 100)
            .replace(/[^\x20-\x7e]/g, ""),
        );
  }

  protected key(): string {
    return this.pick(["", "a", "key", "1", "10", "é", "🎉", this.string()]);
  }

  protected string(): string {
    const roll = this.next();
    if (roll < 0.25) return "";
    const length = roll < 0.8 ? this.int(40) : this.int(300);
    const ascii = this.chance(0.7);
    let out = "";
    for (let i = 0; i < length; i++) {
      if (ascii || this.chance(0.6)) out += printable[this.int(95)];
      else out += this.pick(["\u0000", "é", "ß", "€", "日", "🎉", "👍🏽", "\ud800", "\udfff", "\uffff", "\u07ff", "\u0800"]);
    }
    // now and then a long one, whose length takes 2 or 3 bytes
    return this.chance(0.01) ? out.repeat(1 + this.int(200)) : out;
  }

  protected bytes(): Uint8Array {
    return Uint8Array.from({ length: this.chance(0.9) ? this.int(40) : this.int(400) }, () => this.int(256));
  }
}

describe("encodeStreamResponse: the stream's update events by the static encoders, byte for byte toBinary", () => {
  it("R-GEN-1: knows every field of TaskStatusUpdateEvent and TaskArtifactUpdateEvent (fails when the proto gains one)", () => {
    const fields = (schema: typeof TaskStatusUpdateEventSchema | typeof TaskArtifactUpdateEventSchema) => describeTree(schema)[schema.typeName];
    expect({
      [TaskStatusUpdateEventSchema.typeName]: fields(TaskStatusUpdateEventSchema),
      [TaskArtifactUpdateEventSchema.typeName]: fields(TaskArtifactUpdateEventSchema),
    }).toEqual(ENCODED_EVENT_FIELDS);
  });

  it("R-GEN-1: status and artifact updates, with and without metadata, flags and unknown fields, encode as toBinary does", () => {
    const random = new EncoderTasks(0x51e4);
    const responses: StreamResponse[] = [];
    for (let i = 0; i < 200; i++) {
      const task = random.task();
      const metadata = i % 3 === 0 ? { cursor: `c${i}`, n: i } : undefined;
      responses.push(
        create(StreamResponseSchema, {
          payload: { case: "statusUpdate", value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata } },
        }),
      );
      for (const artifact of task.artifacts) {
        const value = create(TaskArtifactUpdateEventSchema, {
          taskId: task.id,
          contextId: task.contextId,
          artifact,
          append: i % 2 === 0,
          lastChunk: i % 5 === 0,
          metadata,
        });
        if (i % 7 === 0) value.$unknown = [lenUnknown(15, "xyz")];
        responses.push(create(StreamResponseSchema, { payload: { case: "artifactUpdate", value } }));
      }
    }
    expect(responses.filter((r) => r.payload.case === "artifactUpdate").length).toBeGreaterThan(50);
    for (const r of responses) expect(hex(encodeStreamResponse(r))).toBe(hex(toBinary(StreamResponseSchema, r)));
  });
});

describe("encodeStreamResponse: streamed chunks (text parts only), whose ids are copied from the chunk before", () => {
  const chunk = (ids: { taskId: string; contextId: string; artifactId: string; name: string; description?: string }, texts: string[], i: number) =>
    create(StreamResponseSchema, {
      payload: {
        case: "artifactUpdate",
        value: {
          taskId: ids.taskId,
          contextId: ids.contextId,
          append: i % 2 === 1,
          lastChunk: i % 3 === 2,
          artifact: {
            artifactId: ids.artifactId,
            name: ids.name,
            description: ids.description ?? "",
            parts: texts.map((t) => ({ content: { case: "text" as const, value: t } })),
          },
        },
      },
    });

  it("issue 15 item 2 / R-GEN-1: runs of chunks with the same ids, each id changed alone, non-ASCII and empty ids, long texts: the bytes of toBinary", () => {
    const base = { taskId: "0f3b2c1e-8f2a-4b7e-9c1d-2e3f4a5b6c7d", contextId: "7a6b5c4d-3e2f-1a0b-9c8d-7e6f5a4b3c2d", artifactId: "out", name: "out" };
    const variants = [
      base,
      { ...base, taskId: "other-task" },
      { ...base, contextId: "other-context" },
      { ...base, artifactId: "second" },
      { ...base, name: "renamed" },
      { ...base, description: "a description" },
      { taskId: "", contextId: "", artifactId: "", name: "" },
      { taskId: "täsk", contextId: "kontext-日本", artifactId: "🎉", name: "\ud800 lone", description: "é" },
      { ...base, taskId: "t".repeat(200) },
    ];
    const texts = [["#seq=0;t=1796147230002.123;"], [""], ["é", "日本語"], ["x".repeat(200)], ["y".repeat(20_000)], ["a", "b", "c"], ["\udfff"]];
    let i = 0;
    // Each variant after the base one and the base one after it: every id changes alone, both ways.
    for (const ids of variants.flatMap((v) => [base, v, base])) {
      for (let run = 0; run < 3; run++) {
        for (const t of texts) {
          const response = chunk(ids, t, i++);
          expect(hex(encodeStreamResponse(response))).toBe(hex(toBinary(StreamResponseSchema, response)));
        }
      }
    }
  });

  it("issue 15 item 2 / R-GEN-1: a chunk with anything beyond text (metadata, a file name, an extension, unknown fields) between plain ones encodes as toBinary", () => {
    const ids = { taskId: "t", contextId: "c", artifactId: "out", name: "out" };
    const responses = [chunk(ids, ["one"], 0)];
    const withEventMetadata = chunk(ids, ["two"], 1);
    (withEventMetadata.payload.value as { metadata?: JsonObject }).metadata = { cursor: "7" };
    responses.push(withEventMetadata);
    const withFilename = chunk(ids, ["three"], 2);
    const artifact = (withFilename.payload.value as { artifact: { parts: { filename: string }[]; extensions: string[] } }).artifact;
    artifact.parts[0]!.filename = "a.txt";
    responses.push(withFilename, chunk(ids, ["four"], 3));
    const withExtension = chunk(ids, ["five"], 4);
    (withExtension.payload.value as { artifact: { extensions: string[] } }).artifact.extensions = ["urn:x"];
    const withUnknown = chunk(ids, ["six"], 5);
    (withUnknown.payload.value as { $unknown?: UnknownField[] }).$unknown = [lenUnknown(15, "xyz")];
    responses.push(withExtension, withUnknown, chunk(ids, ["seven"], 6));
    for (const r of responses) expect(hex(encodeStreamResponse(r))).toBe(hex(toBinary(StreamResponseSchema, r)));
  });

  it("issue 15 item 2 / R-GEN-1: ids written under one text encoding are not reused under another", () => {
    const ids = { taskId: "t\ud800", contextId: "c", artifactId: "a\udfff", name: "n" };
    const before = chunk(ids, ["x"], 0);
    expect(hex(encodeStreamResponse(before))).toBe(hex(toBinary(StreamResponseSchema, before)));
    // Lone surrogates as "?" instead of U+FFFD: other bytes for the same ids.
    const standard = getTextEncoding();
    configureTextEncoding({ ...standard, encodeUtf8: (text: string) => standard.encodeUtf8(text.replace(/[\ud800-\udfff]/g, "?")) });
    const after = chunk(ids, ["y"], 0);
    expect(hex(toBinary(StreamResponseSchema, after))).not.toContain(hex(new Uint8Array([0xef, 0xbf, 0xbd])));
    expect(hex(encodeStreamResponse(after))).toBe(hex(toBinary(StreamResponseSchema, after)));
    // The A-34 size of the same ids, measured under each encoding.
    const artifact = (after.payload.value as { artifact: Parameters<typeof encodedArtifactSize>[0] }).artifact;
    expect(encodedArtifactSize(artifact)).toBe(toBinary(TaskSchema, create(TaskSchema, { artifacts: [artifact] })).byteLength);
    configureTextEncoding(standard);
    expect(encodedArtifactSize(artifact)).toBe(toBinary(TaskSchema, create(TaskSchema, { artifacts: [artifact] })).byteLength);
    expect(hex(encodeStreamResponse(after))).toBe(hex(toBinary(StreamResponseSchema, after)));
  });
});

describe("encodedTaskSize (A-34: the size of each agent write's piece, measured without copying bytes out)", () => {
  it("A-34: is the length of encodeTask and of toBinary for 300 random tasks, and a following encode is unaffected", () => {
    const random = new EncoderTasks(3415);
    for (let i = 0; i < 300; i++) {
      const task = random.task();
      const size = encodedTaskSize(task);
      expect(size).toBe(toBinary(TaskSchema, task).byteLength);
      expect(encodeTask(task)).toEqual(toBinary(TaskSchema, task));
    }
  });
});

describe("encodedArtifactSize (A-34: what each streamed chunk adds to its task, counted without encoding)", () => {
  it("A-34: is the length toBinary gives a task holding only the artifact, for the artifacts of 300 random tasks and for plain chunks of every kind of text", () => {
    const random = new EncoderTasks(3416);
    const artifacts = Array.from({ length: 300 }, () => random.task().artifacts).flat();
    for (const text of ["", "#seq=1;t=1796147230002.123;", "é", "日本語", "\ud800 lone", "x".repeat(200), "y".repeat(20_000)]) {
      artifacts.push(create(ArtifactSchema, { artifactId: "out", name: "out", parts: [{ content: { case: "text", value: text } }] }));
      artifacts.push(
        create(ArtifactSchema, {
          artifactId: text,
          extensions: [text],
          parts: [{ content: { case: "url", value: text }, filename: text, mediaType: "text/plain" }],
        }),
      );
    }
    artifacts.push(
      create(ArtifactSchema, {
        artifactId: "raw",
        parts: [{ content: { case: "raw", value: new Uint8Array(300) } }, { content: { case: "text", value: "a" } }],
      }),
    );
    // Runs with the same ids, then one id changed at a time (the ids' size is kept from the artifact measured before).
    for (const [artifactId, name, description] of [
      ["out", "out", ""],
      ["out", "out", ""],
      ["out", "renamed", ""],
      ["out", "renamed", "d"],
      ["é", "renamed", "d"],
      ["é", "renamed", "d"],
    ]) {
      artifacts.push(create(ArtifactSchema, { artifactId, name, description, parts: [{ content: { case: "text", value: "chunk" } }] }));
    }
    expect(artifacts.length).toBeGreaterThan(300);
    for (const artifact of artifacts) {
      expect(encodedArtifactSize(artifact)).toBe(toBinary(TaskSchema, create(TaskSchema, { artifacts: [artifact] })).byteLength);
    }
  });
});
