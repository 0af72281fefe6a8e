import { create } from "@bufbuild/protobuf";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
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
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskChange, TaskScope } from "../../src/lifecycle/ports/task-repository.js";

/** Builders for tasks and changes in storage and lifecycle tests. Timestamps are in microseconds. */

export function timestampFromMicros(micros: number): Timestamp {
  const seconds = Math.floor(micros / 1_000_000);
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos: (micros - seconds * 1_000_000) * 1000 });
}

export function microsOf(timestamp: Timestamp | undefined): number {
  if (timestamp === undefined) throw new Error("no timestamp");
  return Number(timestamp.seconds) * 1_000_000 + Math.floor(timestamp.nanos / 1000);
}

/** Strictly increasing microsecond times, as the task service assigns them. */
export class Clock {
  constructor(private micros = 1_750_000_000_000_000) {}
  next(stepMicros = 1): number {
    this.micros += stepMicros;
    return this.micros;
  }
}

export function scopeOf(tenant: string, principal: string): TaskScope {
  return { tenant, principal };
}

let serial = 0;
export function uniqueId(prefix: string): string {
  serial++;
  return `${prefix}-${serial.toString().padStart(6, "0")}`;
}

export function message(text: string, role = Role.USER, ids: { taskId?: string; contextId?: string } = {}): Message {
  return create(MessageSchema, {
    messageId: uniqueId("msg"),
    role,
    taskId: ids.taskId ?? "",
    contextId: ids.contextId ?? "",
    parts: [create(PartSchema, { content: { case: "text", value: text } })],
  });
}

export interface NewTaskOptions {
  id?: string;
  contextId?: string;
  micros: number;
  /** The user's first message, put into history. */
  text?: string;
}

export function newTask(options: NewTaskOptions): Task {
  const id = options.id ?? uniqueId("task");
  const contextId = options.contextId ?? uniqueId("ctx");
  return create(TaskSchema, {
    id,
    contextId,
    status: create(TaskStatusSchema, { state: TaskState.SUBMITTED, timestamp: timestampFromMicros(options.micros) }),
    history: options.text === undefined ? [] : [message(options.text, Role.USER, { taskId: id, contextId })],
  });
}

export function statusChange(state: TaskState, micros: number, agentText?: string): TaskChange {
  return {
    kind: "status",
    status: create(TaskStatusSchema, {
      state,
      timestamp: timestampFromMicros(micros),
      message: agentText === undefined ? undefined : message(agentText, Role.AGENT),
    }),
  };
}

export function textArtifact(artifactId: string, ...texts: string[]): Artifact {
  return create(ArtifactSchema, {
    artifactId,
    parts: texts.map((text) => create(PartSchema, { content: { case: "text", value: text } })),
  });
}

export function artifactChange(artifact: Artifact, append = false, lastChunk = false): TaskChange {
  return { kind: "artifact", artifact, append, lastChunk };
}

export function historyChange(text: string): TaskChange {
  return { kind: "history", message: message(text) };
}

/** Text of every part of an artifact, for assertions. */
export function artifactTexts(artifact: Artifact | undefined): string[] {
  return (artifact?.parts ?? []).map((p) => (p.content.case === "text" ? p.content.value : `<${p.content.case}>`));
}

const S = TaskState;
/** The eight real states (R-TASK-1), written out here rather than taken from the code under test. */
export const EIGHT_STATES: readonly TaskState[] = [S.SUBMITTED, S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED, S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED];

/**
 * Legal transitions, written independently of src/lifecycle/model/task-state.ts from the seed's
 * diagram (SUBMITTED -> WORKING -> terminal | interrupted, interrupted -> WORKING) plus the
 * project's additions: WORKING -> WORKING for progress messages, a task may be failed,
 * canceled or rejected before it starts, a task may settle at once (A-26: SUBMITTED ->
 * COMPLETED, INPUT_REQUIRED, AUTH_REQUIRED), and an interrupted task may be failed or canceled.
 * Terminal states have no way out (R-TASK-2).
 */
export const LEGAL_TRANSITIONS: ReadonlyArray<readonly [TaskState, TaskState]> = [
  [S.SUBMITTED, S.WORKING],
  [S.SUBMITTED, S.FAILED],
  [S.SUBMITTED, S.CANCELED],
  [S.SUBMITTED, S.REJECTED],
  [S.SUBMITTED, S.COMPLETED],
  [S.SUBMITTED, S.INPUT_REQUIRED],
  [S.SUBMITTED, S.AUTH_REQUIRED],
  [S.WORKING, S.WORKING],
  [S.WORKING, S.INPUT_REQUIRED],
  [S.WORKING, S.AUTH_REQUIRED],
  [S.WORKING, S.COMPLETED],
  [S.WORKING, S.FAILED],
  [S.WORKING, S.CANCELED],
  [S.WORKING, S.REJECTED],
  [S.INPUT_REQUIRED, S.WORKING],
  [S.INPUT_REQUIRED, S.FAILED],
  [S.INPUT_REQUIRED, S.CANCELED],
  [S.AUTH_REQUIRED, S.WORKING],
  [S.AUTH_REQUIRED, S.FAILED],
  [S.AUTH_REQUIRED, S.CANCELED],
];

export function isLegal(from: TaskState, to: TaskState): boolean {
  return LEGAL_TRANSITIONS.some(([f, t]) => f === from && t === to);
}

/** A legal way from SUBMITTED to each state, to put a test task where it is needed. */
export const PATH_FROM_SUBMITTED: ReadonlyMap<TaskState, readonly TaskState[]> = new Map<TaskState, TaskState[]>([
  [S.SUBMITTED, []],
  [S.WORKING, [S.WORKING]],
  [S.INPUT_REQUIRED, [S.WORKING, S.INPUT_REQUIRED]],
  [S.AUTH_REQUIRED, [S.WORKING, S.AUTH_REQUIRED]],
  [S.COMPLETED, [S.WORKING, S.COMPLETED]],
  [S.FAILED, [S.WORKING, S.FAILED]],
  [S.CANCELED, [S.WORKING, S.CANCELED]],
  [S.REJECTED, [S.WORKING, S.REJECTED]],
]);

export function stateLabel(state: TaskState): string {
  return TaskState[state] ?? `unknown(${state})`;
}
