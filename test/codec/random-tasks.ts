/**
 * Varied tasks from a seeded generator (mulberry32), so that a failure reproduces. The codec
 * tests share the shape of a task; each fills in the leaves (strings, bytes, timestamps,
 * unknown fields, values that are not JSON) with the edge cases that its codec must meet and
 * that protobuf-es's own function, its reference, accepts.
 */
import { create, type JsonObject, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import { ListValueSchema, NullValue, StructSchema, ValueSchema, type Timestamp, type Value } from "@bufbuild/protobuf/wkt";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  TaskSchema,
  TaskStatusSchema,
  type Artifact,
  type Message,
  type Part,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";

// Globals are slow to reach inside jest's VM context; the generator calls these millions of times.
const { imul, floor } = Math;

export abstract class RandomTasks {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  task(): Task {
    const task = create(TaskSchema, {
      id: this.string(),
      contextId: this.string(),
      artifacts: this.list(3, () => this.artifact()),
      history: this.list(5, () => this.message()),
    });
    if (this.chance(0.8)) {
      task.status = create(TaskStatusSchema, { state: this.enumValue(8) });
      if (this.chance(0.5)) task.status.message = this.statusMessage(task.history);
      if (this.chance(0.7)) task.status.timestamp = this.timestamp();
      this.maybeUnknown(task.status);
    }
    this.maybeMetadata(task);
    return this.maybeUnknown(task);
  }

  // ---- the leaves each codec's test chooses ----

  protected abstract string(): string;
  protected abstract bytes(): Uint8Array;
  /** A Struct key. */
  protected abstract key(): string;
  protected abstract timestamp(): Timestamp;
  protected abstract unknownField(): UnknownField;
  /** A metadata value outside plain JSON (undefined, a bigint, ...), or a plain one. */
  protected abstract oddJsonValue(): JsonValue;
  /** Enum numbers the proto does not know, besides max + 1. */
  protected abstract readonly enumEdges: readonly number[];

  /** The status message: a new one, unless the test also wants it shared with the history. */
  protected statusMessage(_history: readonly Message[]): Message {
    return this.message();
  }

  // ---- the shape ----

  protected message(): Message {
    const msg = create(MessageSchema, {
      messageId: this.string(),
      contextId: this.string(),
      taskId: this.string(),
      role: this.enumValue(2),
      parts: this.list(3, () => this.part()),
      extensions: this.list(2, () => this.string()),
      referenceTaskIds: this.list(2, () => this.string()),
    });
    this.maybeMetadata(msg);
    return this.maybeUnknown(msg);
  }

  private artifact(): Artifact {
    const artifact = create(ArtifactSchema, {
      artifactId: this.string(),
      name: this.string(),
      description: this.string(),
      parts: this.list(3, () => this.part()),
      extensions: this.list(2, () => this.string()),
    });
    this.maybeMetadata(artifact);
    return this.maybeUnknown(artifact);
  }

  private part(): Part {
    const part = create(PartSchema, { filename: this.string(), mediaType: this.string() });
    switch (this.int(5)) {
      case 0:
        part.content = { case: "text", value: this.string() };
        break;
      case 1:
        part.content = { case: "raw", value: this.bytes() };
        break;
      case 2:
        part.content = { case: "url", value: this.string() };
        break;
      case 3:
        part.content = { case: "data", value: this.valueMessage(3) };
        break;
      // 4: no content
    }
    this.maybeMetadata(part);
    return this.maybeUnknown(part);
  }

  private valueMessage(depth: number): Value {
    const v = create(ValueSchema);
    switch (this.int(depth > 0 ? 7 : 5)) {
      case 0:
        v.kind = { case: "nullValue", value: this.chance(0.8) ? NullValue.NULL_VALUE : (3 as NullValue) };
        break;
      case 1:
        v.kind = { case: "numberValue", value: this.number() };
        break;
      case 2:
        v.kind = { case: "stringValue", value: this.string() };
        break;
      case 3:
        v.kind = { case: "boolValue", value: this.chance(0.5) };
        break;
      case 5: {
        const fields: Record<string, Value> = {};
        for (let i = this.int(4); i > 0; i--) fields[this.key()] = this.valueMessage(depth - 1);
        v.kind = { case: "structValue", value: this.maybeUnknown(create(StructSchema, { fields })) };
        break;
      }
      case 6:
        v.kind = { case: "listValue", value: this.maybeUnknown(create(ListValueSchema, { values: this.list(4, () => this.valueMessage(depth - 1)) })) };
        break;
      // 4: no kind
    }
    return this.maybeUnknown(v);
  }

  private maybeMetadata(target: { metadata?: JsonObject }): void {
    if (this.chance(0.2)) target.metadata = this.jsonObject(2);
  }

  private jsonObject(depth: number): JsonObject {
    const obj: JsonObject = {};
    for (let i = this.int(5); i > 0; i--) obj[this.key()] = this.jsonValue(depth);
    return obj;
  }

  private jsonValue(depth: number): JsonValue {
    switch (this.int(depth > 0 ? 7 : 5)) {
      case 0:
        return null;
      case 1:
        return this.number();
      case 2:
        return this.string();
      case 3:
        return this.chance(0.5);
      case 4:
        return this.oddJsonValue();
      case 5:
        return this.list(4, () => this.jsonValue(depth - 1));
      default:
        return this.jsonObject(depth - 1);
    }
  }

  private maybeUnknown<T extends { $unknown?: UnknownField[] }>(message: T): T {
    if (this.chance(0.1)) message.$unknown = this.list(3, () => this.unknownField());
    return message;
  }

  private enumValue(max: number): number {
    return this.chance(0.9) ? this.int(max + 1) : this.pick([max + 1, ...this.enumEdges]);
  }

  // ---- randomness ----

  protected number(): number {
    return this.pick([0, -0, NaN, Infinity, -Infinity, 1.5, -3, 1e300, 5e-324, this.next() * 1e6 - 5e5, this.int(100)]);
  }

  protected list<T>(max: number, item: () => T): T[] {
    return Array.from({ length: this.int(max + 1) }, item);
  }

  protected pick<T>(choices: readonly T[]): T {
    return choices[this.int(choices.length)]!;
  }

  protected chance(p: number): boolean {
    return this.next() < p;
  }

  protected int(below: number): number {
    return floor(this.next() * below);
  }

  protected next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
