import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventRow } from "./event-rows.js";

/** The channel every task write notifies, in the transaction of the write (so only once committed). */
export const TASK_CHANNEL = "a2a_task_events";

/**
 * Event bodies up to this size ride along in their notice (base64: 4/3 of it, well under
 * PostgreSQL's 8000-byte payload limit with the other fields). Larger ones are read from the table.
 */
export const INLINE_EVENT_BYTES = 3000;

/**
 * What a write's NOTIFY says: which task, its version and state after the write, which replica
 * wrote it, and (when small) a copy of the write's event row. A wake-up and a shortcut only: the
 * events are rows of `a2a_task_events`, read by cursor; a listener uses the copy only when it is
 * the very next version it needs, so a lost notice, or one without a copy, delays events (they
 * are read from the table) and never loses them.
 */
export interface TaskNotice {
  readonly taskId: string;
  readonly version: number;
  readonly state: TaskState;
  readonly writer: string;
  /** The write's event row, exactly as committed to the table; absent when large. */
  readonly event?: EventRow;
}

/** A notice as heard: the copy of the row stays base64 until a listener wants it (most notices are for tasks nobody here watches). */
export interface HeardNotice extends Omit<TaskNotice, "event"> {
  /** `<kind>|<base64 body>`, decoded by `copiedRow`. */
  readonly copy?: string;
}

/** The event row a heard notice carries a copy of, or undefined. */
export function copiedRow(notice: HeardNotice): EventRow | undefined {
  if (notice.copy === undefined) return undefined;
  const bar = notice.copy.indexOf("|");
  return { kind: Number(notice.copy.slice(0, bar)), body: Buffer.from(notice.copy.slice(bar + 1), "base64") };
}

/**
 * `<version> <state> <writer>[|<kind>|<base64 body>] <task id>`. The copy is glued to the writer
 * field (no spaces in base64), so a replica of the previous release, which knows only the four
 * fields, still parses the notice: it reads a writer name that is not its own, which is all it
 * asks of a notice from another replica.
 */
export function noticePayload(notice: TaskNotice): string {
  const { event } = notice;
  const body = event?.body;
  const copy =
    body !== undefined && body.length <= INLINE_EVENT_BYTES
      ? `|${event!.kind}|${Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("base64")}`
      : "";
  return `${notice.version} ${notice.state} ${notice.writer}${copy} ${notice.taskId}`;
}

/**
 * Whether a payload (a task notice or a push notice) names `writer` as the replica that wrote it,
 * found without parsing it: a replica's own notices come back to it with every write, and no
 * listener wants them (its writes were published here already).
 */
export function isNoticeOf(payload: string, writer: string): boolean {
  if (payload.startsWith("push ")) return payload.endsWith(` ${writer}`) && payload.length > writer.length + 6;
  const first = payload.indexOf(" ");
  const second = first < 0 ? -1 : payload.indexOf(" ", first + 1);
  if (second < 0 || !payload.startsWith(writer, second + 1)) return false;
  const after = payload.charCodeAt(second + 1 + writer.length);
  return after === 0x20 || after === 0x7c; // " " or "|"
}

/** Parses a payload; undefined if it is not one (the task id is last: it is the only part that may hold spaces). */
export function parseNotice(payload: string): HeardNotice | undefined {
  const match = /^(\d+) (\d+) (\S+) (.+)$/s.exec(payload);
  if (match === null) return undefined;
  const notice = { version: Number(match[1]), state: Number(match[2]) as TaskState, writer: match[3]!, taskId: match[4]! };
  const copy = /^(.+?)\|(\d+\|[A-Za-z0-9+/]*={0,2})$/.exec(notice.writer);
  return copy === null ? notice : { ...notice, writer: copy[1]!, copy: copy[2]! };
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
