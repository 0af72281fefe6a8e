import { describe, expect, it } from "@jest/globals";
import { create, fromBinary, fromJsonString, toJsonString, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import {
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskStatusSchema,
  TaskStatusUpdateEventSchema,
  type StreamResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeStreamResponse } from "../../src/codec/stream-response-encoder.js";
import { pushPayloadOf, pushSnapshotPayloadOf } from "../../src/storage/push-event.js";
import { WEBHOOK_CONTENT_TYPE, webhookBody } from "../../src/push/body-encoding.js";
import { RandomTasks } from "../codec/random-tasks.js";

/** protobuf-es's own ProtoJSON of the stored event, or the fact that it refuses it. */
function reference(event: Uint8Array): { json: string } | { refused: true } {
  try {
    return { json: toJsonString(StreamResponseSchema, fromBinary(StreamResponseSchema, event)) };
  } catch {
    return { refused: true };
  }
}

function body(event: Uint8Array): { json: string } | { refused: true } {
  try {
    return { json: webhookBody(event) };
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

describe("webhook bodies (A-9): protobuf-es's ProtoJSON of the stored StreamResponse", () => {
  it("R-PUSHD-1, A-9: a body is exactly toJsonString(StreamResponseSchema, stored event), which fromJsonString parses back", () => {
    const random = new JsonTasks(0x21a9, true);
    let compared = 0;
    let refused = 0;
    for (let i = 0; i < 250; i++) {
      for (const response of responsesOf(random.task(), random)) {
        const event = encodeStreamResponse(response);
        const expected = reference(event);
        const actual = body(event);
        expect(actual).toEqual(expected);
        if ("refused" in actual) {
          refused++; // toJsonString refuses (NaN, Infinity in a Struct, a timestamp out of range): so does the body
          continue;
        }
        // It parses back with fromJsonString to a message whose JSON is the body again (unknown fields are not in JSON).
        expect(toJsonString(StreamResponseSchema, fromJsonString(StreamResponseSchema, actual.json))).toBe(actual.json);
        compared++;
      }
    }
    // Both outcomes were exercised often enough to mean something.
    expect(compared).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(20);
    expect(WEBHOOK_CONTENT_TYPE).toBe("application/a2a+json");
  });

  it("R-PUSHD-1: camelCase names, enums by name, RFC 3339 timestamps; a lone surrogate is U+FFFD, as the stored UTF-8 holds it", () => {
    const response = create(StreamResponseSchema, {
      payload: {
        case: "statusUpdate",
        value: { taskId: "a\ud800b", contextId: "c", status: { state: 3, timestamp: { seconds: 1735689600n, nanos: 120_000_000 } } },
      },
    });
    expect(JSON.parse(webhookBody(encodeStreamResponse(response)))).toEqual({
      statusUpdate: { taskId: "a\ufffdb", contextId: "c", status: { state: "TASK_STATE_COMPLETED", timestamp: "2025-01-01T00:00:00.120Z" } },
    });
  });

  it("R-PUSHD-1: the store's body for a write equals the body webhook delivery makes from the stored event (pushPayloadOf)", () => {
    const random = new JsonTasks(0x5eed, true);
    let made = 0;
    let refused = 0;
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
        const delivered = reference(payload.event);
        if (payload.body === undefined) {
          // No body: the reference refuses the event too (delivery makes it from the event, and fails as before).
          expect(delivered).toEqual({ refused: true });
          refused++;
          continue;
        }
        expect(payload.body).toBe((delivered as { json: string }).json);
        made++;
      }
    }
    expect(made).toBeGreaterThan(150);
    expect(refused).toBeGreaterThan(0);
  });
});

const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i));

/** Leaves that matter to JSON: escapes, non-ASCII and lone surrogates, base64 lengths, timestamp precisions and ranges, values toJson refuses. */
class JsonTasks extends RandomTasks {
  protected readonly enumEdges = [1000, -1, 0x7fffffff];

  /** loneSurrogates: strings may hold unpaired surrogates (which the stored UTF-8 holds as U+FFFD). */
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
