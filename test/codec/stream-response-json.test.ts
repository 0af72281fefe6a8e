import { describe, expect, it, test } from "@jest/globals";
import { create, fromBinary, toJson, toJsonString, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskSchema,
  TaskState,
  TaskStatusSchema,
  TaskStatusUpdateEventSchema,
  type StreamResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeStreamResponse } from "../../src/codec/stream-response-encoder.js";
import { dateTime, streamResponseJson } from "../../src/codec/stream-response-json.js";
import { ENCODED_EVENT_FIELDS, ENCODED_FIELDS } from "../../src/codec/task-encoder.js";
import { pushPayloadOf, pushSnapshotPayloadOf } from "../../src/storage/push-event.js";
import { webhookBody } from "../../src/push/body-encoding.js";
import { RandomTasks } from "./random-tasks.js";
import { describeTree } from "./support.js";

/** What protobuf-es makes of the response: its string, or the fact that it refuses. */
function reference(response: StreamResponse): { json: string } | { refused: true } {
  try {
    return { json: toJsonString(StreamResponseSchema, response) };
  } catch {
    return { refused: true };
  }
}

/** protobuf-es's JSON of the event as the outbox stores it (what a body made after a restart must equal). */
function fromStored(response: StreamResponse): { json: string } | { refused: true } {
  try {
    return { json: toJsonString(StreamResponseSchema, fromBinary(StreamResponseSchema, encodeStreamResponse(response))) };
  } catch {
    return { refused: true };
  }
}

/** What delivery makes of a stored event (an entry read back from the outbox). */
function readBack(response: StreamResponse): { json: string } | { refused: true } {
  try {
    return { json: webhookBody(encodeStreamResponse(response)) };
  } catch {
    return { refused: true };
  }
}

function ours(response: StreamResponse): { json: string } | { refused: true } {
  try {
    return { json: streamResponseJson(response) };
  } catch {
    return { refused: true };
  }
}

/** The four payloads a response can hold, made from one random task. */
function responsesOf(task: Task, random: JsonTasks): StreamResponse[] {
  const { id: taskId, contextId, metadata } = task;
  const responses: StreamResponse[] = [create(StreamResponseSchema, { payload: { case: "task", value: task } })];
  if (task.status !== undefined || random.flip()) {
    const value = create(TaskStatusUpdateEventSchema, { taskId, contextId, metadata });
    value.status = task.status;
    responses.push(create(StreamResponseSchema, { payload: { case: "statusUpdate", value } }));
  }
  const value = create(TaskArtifactUpdateEventSchema, { taskId, contextId, append: random.flip(), lastChunk: random.flip(), metadata });
  value.artifact = task.artifacts[0];
  responses.push(create(StreamResponseSchema, { payload: { case: "artifactUpdate", value } }));
  if (task.history[0] !== undefined) responses.push(create(StreamResponseSchema, { payload: { case: "message", value: task.history[0] } }));
  return responses;
}

describe("streamResponseJson: a static ProtoJSON encoder for webhook bodies (A-9), string for string protobuf-es's toJsonString", () => {
  it("R-GEN-1: mirrors the message tree the binary encoders know (fails when the proto gains a field)", () => {
    expect(describeTree(TaskSchema)).toEqual(ENCODED_FIELDS);
    expect(describeTree(StreamResponseSchema)["lf.a2a.v1.StreamResponse"]).toEqual([
      "1 task lf.a2a.v1.Task oneof payload",
      "2 message lf.a2a.v1.Message oneof payload",
      "3 statusUpdate lf.a2a.v1.TaskStatusUpdateEvent oneof payload",
      "4 artifactUpdate lf.a2a.v1.TaskArtifactUpdateEvent oneof payload",
    ]);
    expect(describeTree(TaskStatusUpdateEventSchema)["lf.a2a.v1.TaskStatusUpdateEvent"]).toEqual(ENCODED_EVENT_FIELDS["lf.a2a.v1.TaskStatusUpdateEvent"]);
    expect(describeTree(TaskArtifactUpdateEventSchema)["lf.a2a.v1.TaskArtifactUpdateEvent"]).toEqual(ENCODED_EVENT_FIELDS["lf.a2a.v1.TaskArtifactUpdateEvent"]);
  });

  it("R-PUSHD-1, A-9: hundreds of random tasks, status and artifact updates and messages give toJsonString's string, valid JSON equal to toJson's", () => {
    const random = new JsonTasks(0x21a9, false);
    let compared = 0;
    let refused = 0;
    for (let i = 0; i < 250; i++) {
      for (const response of responsesOf(random.task(), random)) {
        const expected = reference(response);
        const actual = ours(response);
        if ("refused" in expected) {
          // toJson refuses (NaN, Infinity or undefined in a Struct or Value, a Value without kind, a timestamp out of range): so do we.
          expect(actual).toEqual(expected);
          refused++;
          continue;
        }
        expect(actual).toEqual(expected);
        const json = (actual as { json: string }).json;
        expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(toJson(StreamResponseSchema, response))));
        compared++;
      }
    }
    // Both outcomes were exercised often enough to mean something.
    expect(compared).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(20);
  });

  it("R-PUSHD-1: a lone surrogate is written as U+FFFD, as the stored event has it: a body is the same live and after a restart (read back, as toJsonString writes it)", () => {
    const random = new JsonTasks(0x7e57, true);
    let compared = 0;
    for (let i = 0; i < 150; i++) {
      for (const response of responsesOf(random.task(), random)) {
        const actual = ours(response);
        // Where ours refuses, delivery makes the body from the stored event (an undefined in metadata is stored as null there).
        const stored = fromStored(response);
        expect(readBack(response)).toEqual(stored); // an entry read back from the outbox, as toJsonString writes it
        if ("refused" in actual) continue;
        expect(actual).toEqual(stored);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(250);
    const lone = create(StreamResponseSchema, { payload: { case: "task", value: create(TaskSchema, { id: "a\ud800b", contextId: "\udfff" }) } });
    expect(JSON.parse(streamResponseJson(lone))).toEqual({ task: { id: "a\ufffdb", contextId: "\ufffd" } });
  });

  it("R-PUSHD-1: empty and default fields are left out as protobuf-es leaves them; a oneof member is written whatever its value", () => {
    const task = create(TaskSchema, { id: "t", status: { state: TaskState.UNSPECIFIED } });
    const cases: StreamResponse[] = [
      create(StreamResponseSchema),
      create(StreamResponseSchema, { payload: { case: "task", value: create(TaskSchema) } }),
      create(StreamResponseSchema, { payload: { case: "task", value: task } }),
      create(StreamResponseSchema, {
        payload: {
          case: "task",
          value: create(TaskSchema, {
            id: "t",
            metadata: {},
            artifacts: [{ parts: [{ content: { case: "raw", value: new Uint8Array() } }, { content: { case: "text", value: "" } }, {}] }],
            history: [{ parts: [{ content: { case: "data", value: { kind: { case: "listValue", value: { values: [] } } } } }] }],
          }),
        },
      }),
      create(StreamResponseSchema, { payload: { case: "artifactUpdate", value: { taskId: "t", append: false, lastChunk: true } } }),
    ];
    for (const response of cases) expect(streamResponseJson(response)).toBe(toJsonString(StreamResponseSchema, response));
    expect(streamResponseJson(cases[3]!)).toContain('"raw":""');
  });

  it("R-PUSHD-1: the store's body for a write equals the body webhook delivery makes from the stored event (pushPayloadOf)", () => {
    const random = new JsonTasks(0x5eed, true);
    let made = 0;
    for (let i = 0; i < 150; i++) {
      const task = random.task();
      const payloads = [
        pushSnapshotPayloadOf(task),
        pushPayloadOf(task.id, task.contextId, { kind: "status", status: task.status ?? create(TaskStatusSchema) }),
        ...(task.artifacts[0] === undefined
          ? []
          : [pushPayloadOf(task.id, task.contextId, { kind: "artifact", artifact: task.artifacts[0], append: random.flip(), lastChunk: random.flip() })]),
      ];
      for (const payload of payloads) {
        if (payload === undefined) continue;
        let fromEvent: string | undefined;
        try {
          fromEvent = toJsonString(StreamResponseSchema, fromBinary(StreamResponseSchema, payload.event));
        } catch {
          fromEvent = undefined; // the reference refuses it: the store must make no body either
        }
        // No body: delivery makes it from the event (push-service), as before this encoder existed.
        if (payload.body === undefined) continue;
        expect(payload.body).toBe(fromEvent);
        made++;
      }
    }
    expect(made).toBeGreaterThan(150);
  });
});

const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i));

/** Leaves that matter to JSON: escapes, non-ASCII and lone surrogates, base64 lengths, timestamp precisions and ranges, values toJson refuses. */
class JsonTasks extends RandomTasks {
  protected readonly enumEdges = [1000, -1, 0x7fffffff];

  /** loneSurrogates: strings may hold unpaired surrogates (which toJson writes as escapes, and the stored UTF-8 as U+FFFD). */
  constructor(
    seed: number,
    private readonly loneSurrogates: boolean,
  ) {
    super(seed);
  }

  flip(): boolean {
    return this.chance(0.5);
  }

  protected oddJsonValue(): JsonValue {
    const roll = this.next();
    if (roll < 0.02) return undefined as unknown as JsonValue;
    if (roll < 0.04) return NaN;
    return this.pick(["\u2028", '"', "\\", "</script>", -0, 1e21, 0.1, 1e-7]);
  }

  protected override number(): number {
    // Mostly finite: NaN and Infinity make toJson refuse the whole response.
    return this.chance(0.97) ? this.pick([0, -0, 1.5, -3, 1e300, 5e-324, 2 ** 53 + 1, this.next() * 1e6 - 5e5, this.int(100)]) : this.pick([NaN, Infinity]);
  }

  protected timestamp(): Timestamp {
    const seconds = this.chance(0.97)
      ? this.pick([0n, 1n, 1735689600n + BigInt(this.int(1e6)), -62135596800n, 253402300799n, -1n])
      : this.pick([-62135596801n, 253402300800n, 2n ** 62n]);
    const nanos = this.chance(0.97) ? this.pick([0, 1, 1_000, 1_000_000, 120_000_000, this.int(1e9), 999_999_999]) : this.pick([-1, 1_000_000_000]);
    return create(TimestampSchema, { seconds, nanos });
  }

  protected unknownField(): UnknownField {
    return { no: this.pick([9, 100]), wireType: WireType.Varint, data: new Uint8Array([this.int(128)]) };
  }

  protected key(): string {
    return this.pick(["", "a", "key", "1", "10", "é", "🎉", '"q"', "__proto__", this.string()]);
  }

  protected bytes(): Uint8Array {
    return Uint8Array.from({ length: this.int(7) }, () => this.int(256));
  }

  protected string(): string {
    const roll = this.next();
    if (roll < 0.25) return "";
    const length = this.int(30);
    let out = "";
    for (let i = 0; i < length; i++) {
      if (this.chance(0.7)) out += printable[this.int(95)];
      else if (this.loneSurrogates && this.chance(0.2)) out += this.pick(["\ud800", "\udfff", "\udbff"]);
      else out += this.pick(["\u0000", "\n", "\t", '"', "\\", "/", "é", "€", "🎉", "\u2028", "\u007f", "\uffff"]);
    }
    return out;
  }
}

test("R-PUSHD-1: timestamps are written as toISOString writes them, from 0001-01-01 to 9999-12-31, leap days and day ends included", () => {
  const min = -62135596800;
  const max = 253402300799;
  const seconds = [min, max, 0, -1, 86_399, 86_400, 951_782_400, 951_868_799, 4_107_542_400, 4_107_628_800, 1_709_164_800, -2_203_891_200];
  let state = 0x1234_5678;
  for (let i = 0; i < 2000; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    seconds.push(min + Math.floor((state / 2 ** 32) * (max - min)));
  }
  for (const s of seconds) expect(dateTime(s)).toBe(new Date(s * 1000).toISOString().slice(0, 19));
});
