import { equals, fromBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneMessage } from "../../codec/task-clone.js";
import { encodeTask } from "../../codec/task-encoder.js";
import type { ByteSlabs } from "./byte-slabs.js";

/**
 * A settled task kept as its protobuf encoding in off-heap slabs (see ByteSlabs), behind a
 * one-byte header; the task's slot keeps only the entry's address.
 * The id and context id are left out: the store keeps them already (task and context keys),
 * and gives them back on unpacking.
 * The status message is normally also the last history entry (it was appended there),
 * so it is stored once: header STATUS_MESSAGE_IN_HISTORY says to restore it from there.
 */
export type PackedTask = number;

const HEADER_PLAIN = 0;
const HEADER_STATUS_MESSAGE_IN_HISTORY = 1;

/** Packs `task` into `slabs` without its id and context id; returns the entry's address. */
export function packTask(slabs: ByteSlabs, task: Task): PackedTask {
  const message = task.status?.message;
  const last = task.history[task.history.length - 1];
  const shared = message !== undefined && last !== undefined && (message === last || equals(MessageSchema, message, last));
  const status = shared ? { ...task.status!, message: undefined } : task.status;
  return slabs.append(shared ? HEADER_STATUS_MESSAGE_IN_HISTORY : HEADER_PLAIN, encodeTask({ ...task, id: "", contextId: "", status }));
}

/** Decodes a fresh Task with the given id and context id; nothing in it aliases storage. */
export function unpackTask(slabs: ByteSlabs, packed: PackedTask, id: string, contextId: string): Task {
  const task = fromBinary(TaskSchema, slabs.copy(packed));
  task.id = id;
  task.contextId = contextId;
  if (slabs.header(packed) === HEADER_STATUS_MESSAGE_IN_HISTORY) task.status!.message = cloneMessage(task.history[task.history.length - 1]!);
  return task;
}
