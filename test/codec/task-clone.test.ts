import { describe, expect, it } from "@jest/globals";
import { clone, create, equals, toBinary, type DescMessage, type JsonObject, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { ListValueSchema, NullValue, StructSchema, TimestampSchema, ValueSchema, type Timestamp, type Value } from "@bufbuild/protobuf/wkt";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  Role,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  type Artifact,
  type Message,
  type Task,
  type TaskStatus,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { CLONED_FIELDS, cloneArtifact, cloneMessage, cloneTask, cloneTaskStatus } from "../../src/codec/task-clone.js";
import { RandomTasks } from "./random-tasks.js";
import { at, describeTree, hex, message, taskWith, textPart, unknown, value, withParts } from "./support.js";

type Cloned = Task | TaskStatus | Artifact | Message;
const cloners = [
  { schema: TaskSchema, cloneStatic: cloneTask },
  { schema: TaskStatusSchema, cloneStatic: cloneTaskStatus },
  { schema: ArtifactSchema, cloneStatic: cloneArtifact },
  { schema: MessageSchema, cloneStatic: cloneMessage },
] as const;

/** Which of the four a message is, by its $typeName. */
function clonerOf(value: Cloned) {
  const found = cloners.find((c) => c.schema.typeName === value.$typeName);
  if (!found) throw new Error(`no cloner for ${value.$typeName}`);
  return found as unknown as { schema: DescMessage; cloneStatic: (v: Cloned) => Cloned };
}

/**
 * The static clone against clone(): equal by protobuf-es equals() and by toStrictEqual (same keys,
 * same classes), the same bytes, and nothing mutable reachable from both the copy and the input.
 */
function expectSameClone(value: Cloned): void {
  const { schema, cloneStatic } = clonerOf(value);
  const ours = cloneStatic(value);
  const theirs = clone(schema, value);
  expect(ours).toStrictEqual(theirs);
  // equals() compares doubles by IEEE rules (NaN differs from NaN): ask it what it says of two clone() results.
  expect(equals(schema, ours, theirs)).toBe(equals(schema, clone(schema, value), theirs));
  expect(hex(toBinary(schema, ours))).toBe(hex(toBinary(schema, theirs)));
  expectNothingShared(value, ours);
}

function expectNothingShared(input: unknown, copy: unknown): void {
  const fromInput = reachable(input);
  const shared = [...reachable(copy)].filter((o) => fromInput.has(o));
  expect(shared).toEqual([]);
}

/** Every object, array, typed array and ArrayBuffer reachable from `root` (own keys, non-builtin prototypes). */
function reachable(root: unknown): Set<object> {
  const seen = new Set<object>();
  const visit = (value: unknown): void => {
    if (value === null || (typeof value !== "object" && typeof value !== "function") || seen.has(value)) return;
    seen.add(value);
    if (ArrayBuffer.isView(value)) {
      seen.add(value.buffer);
      return;
    }
    const proto = Object.getPrototypeOf(value) as { constructor?: { prototype?: unknown } } | null;
    if (proto !== null && proto.constructor?.prototype !== proto) visit(proto); // e.g. a prototype set through "__proto__"
    for (const key of Object.keys(value)) visit((value as Record<string, unknown>)[key]);
  };
  visit(root);
  return seen;
}

describe("cloneTask & co: static deep copies equal to protobuf-es's clone()", () => {
  it("R-GEN-1: knows every field of every message reachable from Task (fails when the proto gains one)", () => {
    expect(describeTree(TaskSchema)).toEqual(CLONED_FIELDS);
  });

  it("R-GEN-1: an empty message of each type: scalars and lists present, message fields absent", () => {
    for (const { schema } of cloners) expectSameClone(create(schema));
    expect(Object.keys(cloneTask(create(TaskSchema)))).toEqual(["$typeName", "id", "contextId", "artifacts", "history"]);
    expectSameClone(taskWith({ status: create(TaskStatusSchema), metadata: {} }));
    expectSameClone(taskWith({ status: create(TaskStatusSchema, { message: create(MessageSchema), timestamp: at(0n) }) }));
    // a message field present as a key but undefined is unset
    expectSameClone({ ...taskWith({}), status: undefined, metadata: undefined });
  });

  it("R-GEN-1: every case of Part.content, and a part with none", () => {
    const parts = [
      textPart("hello"),
      textPart(""),
      create(PartSchema, { content: { case: "raw", value: new Uint8Array([0, 1, 2, 255]) } }),
      create(PartSchema, { content: { case: "raw", value: new Uint8Array(0) } }),
      create(PartSchema, { content: { case: "raw", value: new Uint8Array(600).fill(7).subarray(10, 300) } }),
      create(PartSchema, { content: { case: "url", value: "https://example.com/a.png" }, filename: "a.png", mediaType: "image/png" }),
      create(PartSchema, { content: { case: "data", value: create(ValueSchema) } }),
      create(PartSchema, { content: { case: "data", value: value({ case: "stringValue", value: "x" }) } }),
      create(PartSchema, { filename: "only-a-name.txt", metadata: { k: "v" } }),
    ];
    for (const part of parts) expectSameClone(withParts(part));
    expectSameClone(withParts(...parts));
  });

  it("R-GEN-1: raw bytes are a copy in new memory, also for a Node Buffer (where clone() hands back a view on the input's memory)", () => {
    const pooled = Buffer.from([1, 2, 3]);
    const task = withParts(create(PartSchema, { content: { case: "raw", value: pooled } }));
    expectSameClone(task);
    const copy = cloneTask(task).history[0]!.parts[0]!.content.value as Uint8Array;
    expect(copy).toBeInstanceOf(Buffer);
    copy[0] = 99;
    expect(pooled[0]).toBe(1);
    const theirs = clone(TaskSchema, task).history[0]!.parts[0]!.content.value as Uint8Array;
    expect(theirs.buffer).toBe(pooled.buffer); // why we do not just call .slice()
  });

  it("R-GEN-1: Part.data as a Value message of every kind, nested, with unknown fields and missing entries", () => {
    const struct = create(StructSchema, {
      fields: {
        n: value({ case: "numberValue", value: -0 }),
        nan: value({ case: "numberValue", value: NaN }),
        b: value({ case: "boolValue", value: false }),
        s: value({ case: "stringValue", value: "" }),
        nil: value({ case: "nullValue", value: NullValue.NULL_VALUE }),
        odd: value({ case: "nullValue", value: 7 as NullValue }),
        none: create(ValueSchema),
        list: value({ case: "listValue", value: create(ListValueSchema, { values: [value({ case: "numberValue", value: 1 }), create(ValueSchema)] }) }),
        deep: value({ case: "structValue", value: create(StructSchema, { fields: { x: value({ case: "listValue", value: create(ListValueSchema) }) } }) }),
      },
    });
    struct.$unknown = [unknown(9, 1)];
    const data = value({ case: "structValue", value: struct });
    data.$unknown = [unknown(20, 2)];
    expectSameClone(withParts(create(PartSchema, { content: { case: "data", value: data } })));
    // entries that are undefined read as empty Values
    const holes = create(StructSchema, { fields: { gone: undefined as unknown as Value } });
    const list = create(ListValueSchema, { values: [undefined as unknown as Value, value({ case: "boolValue", value: true })] });
    expectSameClone(withParts(create(PartSchema, { content: { case: "data", value: value({ case: "structValue", value: holes }) } })));
    expectSameClone(withParts(create(PartSchema, { content: { case: "data", value: value({ case: "listValue", value: list }) } })));
  });

  it("R-GEN-1: metadata Structs with nested lists, objects, null, odd numbers and odd keys", () => {
    const metadata = {
      s: "text",
      n: 1.5,
      negativeZero: -0,
      nan: NaN,
      inf: -Infinity,
      t: true,
      f: false,
      nil: null,
      list: [1, "two", null, false, [[], {}], { deep: { deeper: [-0, { x: null }] } }],
      empty: {},
      "": "empty key",
      "10": "integer-like keys first",
      "2": "two",
    } as JsonObject;
    expectSameClone(taskWith({ metadata }));
    expectSameClone(taskWith({ metadata: {} }));
    expectSameClone(taskWith({ artifacts: [create(ArtifactSchema, { artifactId: "a", metadata, parts: [create(PartSchema, { metadata })] })] }));
    expectSameClone(taskWith({ history: [message({ metadata })] }));
    expectSameClone(create(TaskStatusSchema, { message: message({ metadata }) }));
  });

  it("R-GEN-1: metadata that is not JSON is read as clone()'s Struct round trip reads it", () => {
    const odd = {
      undef: undefined,
      big: 10n,
      fn: () => 1,
      date: new Date(0),
      bytes: new Uint8Array([5, 6]),
      list: [undefined, 1n, , 2], // a hole too
      nested: { u: undefined },
    } as unknown as JsonObject;
    expectSameClone(taskWith({ metadata: odd }));
    expect(cloneTask(taskWith({ metadata: odd })).metadata).toEqual({
      undef: null,
      big: null,
      fn: null,
      date: {},
      bytes: { 0: 5, 1: 6 },
      list: [null, null, null, 2],
      nested: { u: null },
    });
    // null metadata is an empty Struct
    expectSameClone(taskWith({ metadata: null as unknown as JsonObject }));
    // an own "__proto__" key (JSON.parse makes one) is lost, as in clone(), and pollutes nothing
    const parsed = JSON.parse('{"__proto__": {"polluted": 1}, "a": {"__proto__": [1]}, "b": 2}') as JsonObject;
    expectSameClone(taskWith({ metadata: parsed }));
    expect(cloneTask(taskWith({ metadata: parsed })).metadata).toEqual({ a: {}, b: 2 });
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it('R-GEN-1: an own "__proto__" key in a Part.data Struct message behaves as in clone()', () => {
    const fields = JSON.parse('{"__proto__": 1, "k": 2}') as Record<string, unknown>;
    fields["__proto__"] = value({ case: "stringValue", value: "proto" });
    fields["k"] = value({ case: "boolValue", value: true });
    const struct = create(StructSchema);
    struct.fields = fields as Record<string, Value>;
    expectSameClone(withParts(create(PartSchema, { content: { case: "data", value: value({ case: "structValue", value: struct }) } })));
  });

  it("R-GEN-1: $unknown fields on every message type are deep-copied, an empty list is dropped", () => {
    const ts = at(1n);
    ts.$unknown = [unknown(3, 1)];
    const part = textPart("p");
    part.$unknown = [unknown(100, 0x80, 0x01), { no: 15, wireType: WireType.LengthDelimited, data: new Uint8Array([3, 97, 98, 99]) }];
    const msg = message({ parts: [part] });
    msg.$unknown = [unknown(16, 5)];
    const artifact = create(ArtifactSchema, { artifactId: "a", parts: [part] });
    artifact.$unknown = [unknown(2 ** 29 - 1, 0)];
    const status = create(TaskStatusSchema, { state: TaskState.WORKING, message: msg, timestamp: ts });
    status.$unknown = [{ no: 4, wireType: WireType.Bit32, data: Buffer.from([1, 2, 3, 4]) }];
    const task = taskWith({ status, artifacts: [artifact], history: [msg] });
    task.$unknown = [unknown(7, 42), unknown(7, 43)];
    expectSameClone(task);
    for (const m of [status, artifact, msg]) expectSameClone(m);
    const empty = taskWith({});
    empty.$unknown = [];
    expectSameClone(empty);
    expect("$unknown" in cloneTask(empty)).toBe(false);
  });

  it("R-GEN-1: enums with numbers the proto does not know, and -0 read as unset", () => {
    for (const state of [9, 100, -1, 0x7fffffff, -0x80000000, -0] as number[] as TaskState[]) {
      expectSameClone(taskWith({ status: create(TaskStatusSchema, { state }), history: [message({ role: state as number as Role })] }));
    }
  });

  it("R-GEN-1: timestamps: zero, negative, beyond 32 bits, -0 nanos, seconds given as number or string", () => {
    for (const [seconds, nanos] of [
      [0n, 1],
      [1735689600n, 999999999],
      [-1n, 0],
      [2n ** 40n, -1],
      [-(2n ** 63n), 0],
      [2n ** 63n - 1n, -0],
    ] as const) {
      expectSameClone(create(TaskStatusSchema, { state: TaskState.COMPLETED, timestamp: at(seconds, nanos) }));
    }
    for (const seconds of [0, 5, -7, "0", "1735689600", "-9223372036854775808"]) {
      const ts = at(0n);
      ts.seconds = seconds as unknown as bigint;
      expectSameClone(create(TaskStatusSchema, { timestamp: ts }));
      expect(typeof cloneTaskStatus(create(TaskStatusSchema, { timestamp: ts })).timestamp!.seconds).toBe("bigint");
    }
  });

  it("R-GEN-1: properties outside the schema are dropped, and $typeName comes from the type", () => {
    const task = { ...taskWith({ status: create(TaskStatusSchema) }), extra: { x: 1 } } as Task;
    expectSameClone(task);
    expect("extra" in cloneTask(task)).toBe(false);
  });

  it("R-GEN-1: where clone() throws (a lone surrogate, an enum of 1.5) the static clone copies what it is given", () => {
    const lone = taskWith({ id: "\ud800", history: [message({ parts: [textPart("a\udc00")] })] });
    expect(() => clone(TaskSchema, lone)).toThrow(/UTF8/);
    expect(cloneTask(lone)).toStrictEqual(lone);
    const fraction = create(TaskStatusSchema, { state: 1.5 as TaskState });
    expect(() => clone(TaskStatusSchema, fraction)).toThrow();
    expect(cloneTaskStatus(fraction).state).toBe(1.5);
  });

  it("R-GEN-1: a long history", () => {
    const history = Array.from({ length: 1000 }, (_, i) => message({ messageId: `m-${i}`, parts: [textPart(`text ${i}`)] }));
    expectSameClone(taskWith({ history, status: create(TaskStatusSchema, { state: TaskState.COMPLETED, message: history[999] }) }));
  });

  it("R-GEN-1: a message reachable twice in the input (status message also in history) gives two separate copies", () => {
    const reply = message({ role: Role.AGENT });
    const copy = cloneTask(taskWith({ status: create(TaskStatusSchema, { message: reply }), history: [reply] }));
    expect(copy.status!.message).not.toBe(copy.history[0]);
    expect(copy.status!.message).toStrictEqual(copy.history[0]);
  });

  it("R-GEN-1: 600 seeded random tasks (and the statuses, artifacts and messages of 100), each equal to clone()'s", () => {
    const random = new CloneTasks(0xc10e);
    for (let i = 0; i < 600; i++) {
      const task = random.task();
      expectSameClone(task);
      if (i % 6 !== 0) continue;
      if (task.status) expectSameClone(task.status);
      for (const artifact of task.artifacts) expectSameClone(artifact);
      for (const msg of task.history) expectSameClone(msg);
    }
  });
});

/** Tasks with values at the edges clone() accepts: no lone surrogates (clone() refuses them; a test above shows we copy them). */
class CloneTasks extends RandomTasks {
  protected readonly enumEdges = [1000, -1, -0, 0x7fffffff, -0x80000000];

  /** Sometimes the first history message itself: the copy must not share it. */
  protected override statusMessage(history: readonly Message[]): Message {
    return this.chance(0.5) && history.length > 0 ? history[0]! : this.message();
  }

  protected oddJsonValue(): JsonValue {
    return this.pick([undefined, 1n, new Date(1), this.number()] as unknown as JsonValue[]); // mostly not JSON
  }

  protected timestamp(): Timestamp {
    const ts = create(TimestampSchema, {
      seconds: this.pick([0n, 1n, 1735689600n + BigInt(this.int(1e6)), -1n, 2n ** 40n, -(2n ** 63n), 2n ** 63n - 1n]),
      nanos: this.pick([0, -0, 1, this.int(1e9), 999_999_999, -1]),
    });
    if (this.chance(0.05)) ts.seconds = this.pick([0, 42, "17"]) as unknown as bigint;
    return ts;
  }

  protected unknownField(): UnknownField {
    return {
      no: this.pick([9, 15, 100, 2 ** 29 - 1]),
      wireType: WireType.Varint,
      data: this.chance(0.5) ? Buffer.from([this.int(128)]) : new Uint8Array([this.int(128)]),
    };
  }

  protected key(): string {
    // not "constructor": toStrictEqual compares a.constructor === b.constructor, false for two NaN values
    return this.pick(["", "a", "key", "1", "10", "é", "🎉", "__proto__", "toString", this.string()]);
  }

  protected string(): string {
    if (this.chance(0.25)) return "";
    let out = "";
    for (let i = this.int(30); i > 0; i--) out += this.pick(["a", "Z", "0", " ", "-", "é", "日", "🎉", "\u0000"]);
    return out;
  }

  protected bytes(): Uint8Array {
    const bytes = Uint8Array.from({ length: this.int(40) }, () => this.int(256));
    switch (this.int(3)) {
      case 0:
        return Buffer.from(bytes); // as gRPC hands them over
      case 1:
        return new Uint8Array([9, ...bytes, 9]).subarray(1, bytes.length + 1); // a view into a larger buffer
      default:
        return bytes;
    }
  }
}
