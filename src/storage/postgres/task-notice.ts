import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/** The channel every task write notifies, in the transaction of the write (so only once committed). */
export const TASK_CHANNEL = "a2a_task_events";

/**
 * What a write's NOTIFY says: which task, its version and state after the write, and which
 * replica wrote it. A wake-up only: the events themselves are read from `a2a_task_events`,
 * so a notification lost (the listening connection dropped) delays them, never loses them.
 */
export interface TaskNotice {
  readonly taskId: string;
  readonly version: number;
  readonly state: TaskState;
  readonly writer: string;
}

export function noticePayload(notice: TaskNotice): string {
  return `${notice.version} ${notice.state} ${notice.writer} ${notice.taskId}`;
}

/** Parses a payload; undefined if it is not one (the task id is last: it is the only part that may hold spaces). */
export function parseNotice(payload: string): TaskNotice | undefined {
  const match = /^(\d+) (\d+) (\S+) (.+)$/s.exec(payload);
  if (match === null) return undefined;
  return { version: Number(match[1]), state: Number(match[2]) as TaskState, writer: match[3]!, taskId: match[4]! };
}

/**
 * What a commit that added push outbox rows says on the same channel (from `a2a_push_owe`, or a
 * config put with its snapshot): how many rows, and which replica wrote them. A wake-up only,
 * like a task notice: replicas read the outbox itself, and poll it too.
 */
export interface PushNotice {
  readonly added: number;
  readonly writer: string;
}

export function pushNoticePayload(notice: PushNotice): string {
  return `push ${notice.added} ${notice.writer}`;
}

/** Undefined if the payload is not a push notice (a task notice starts with its version, a number). */
export function parsePushNotice(payload: string): PushNotice | undefined {
  const match = /^push (\d+) (\S+)$/.exec(payload);
  return match === null ? undefined : { added: Number(match[1]), writer: match[2]! };
}
