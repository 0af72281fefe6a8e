import { equals, fromBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskSchema, type Message, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneMessage } from "../../codec/task-clone.js";
import { encodeTask } from "../../codec/task-encoder.js";
import type { ByteSlabs } from "./byte-slabs.js";

/**
 * A settled task kept as its protobuf encoding in off-heap slabs (see ByteSlabs), behind a
 * one-byte header of flags; the task's slot keeps only the entry's address.
 * What the store knows already is left out, and put back on unpacking:
 * - the task's id and context id (the store keeps them as the task's keys);
 * - STATUS_MESSAGE_IN_HISTORY: the status message is normally also the last history entry
 *   (it was appended there), so it is stored once;
 * - MESSAGE_IDS_ARE_TASKS: every message names this task and its context (the usual case:
 *   the service stamps them), so their task and context ids are dropped too.
 */
export type PackedTask = number;

const STATUS_MESSAGE_IN_HISTORY = 1;
const MESSAGE_IDS_ARE_TASKS = 2;

/**
 * Packs `task` into `slabs`; returns the entry's address. The task is left as it was.
 * Why in place: what is left out is blanked on the task itself while it is encoded, and put
 * back right after (nothing else runs in between); copying the task, its status and each
 * message to leave them out cost more than encoding.
 */
export function packTask(slabs: ByteSlabs, task: Task): PackedTask {
  const { id, contextId, status, history } = task;
  const message = status?.message;
  const last = history[history.length - 1];
  let header = 0;
  if (message !== undefined && last !== undefined && (message === last || equals(MessageSchema, message, last))) header |= STATUS_MESSAGE_IN_HISTORY;
  const kept = header & STATUS_MESSAGE_IN_HISTORY ? undefined : message;
  if (allNameTask(history, task) && (kept === undefined || namesTask(kept, task))) header |= MESSAGE_IDS_ARE_TASKS;
  task.id = "";
  task.contextId = "";
  if (status !== undefined) status.message = kept;
  if (header & MESSAGE_IDS_ARE_TASKS) setIds(history, kept, "", "");
  try {
    return slabs.append(header, encodeTask(task));
  } finally {
    task.id = id;
    task.contextId = contextId;
    if (status !== undefined) status.message = message;
    if (header & MESSAGE_IDS_ARE_TASKS) setIds(history, kept, id, contextId);
  }
}

function allNameTask(history: readonly Message[], task: Task): boolean {
  for (const m of history) if (!namesTask(m, task)) return false;
  return true;
}

function namesTask(m: Message, task: Task): boolean {
  return m.taskId === task.id && m.contextId === task.contextId;
}

function setIds(history: readonly Message[], message: Message | undefined, taskId: string, contextId: string): void {
  for (const m of history) {
    m.taskId = taskId;
    m.contextId = contextId;
  }
  if (message !== undefined) {
    message.taskId = taskId;
    message.contextId = contextId;
  }
}

/** Decodes a fresh Task with the given id and context id; nothing in it aliases storage. */
export function unpackTask(slabs: ByteSlabs, packed: PackedTask, id: string, contextId: string): Task {
  const task = fromBinary(TaskSchema, slabs.copy(packed));
  const header = slabs.header(packed);
  task.id = id;
  task.contextId = contextId;
  if (header & MESSAGE_IDS_ARE_TASKS) {
    for (const m of task.history) {
      m.taskId = id;
      m.contextId = contextId;
    }
    if (task.status?.message !== undefined) {
      task.status.message.taskId = id;
      task.status.message.contextId = contextId;
    }
  }
  if (header & STATUS_MESSAGE_IN_HISTORY) task.status!.message = cloneMessage(task.history[task.history.length - 1]!);
  return task;
}
