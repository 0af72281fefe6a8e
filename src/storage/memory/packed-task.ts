import { equals, fromBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneMessage } from "../../codec/task-clone.js";
import { encodeTask } from "../../codec/task-encoder.js";
import type { ByteSlabs } from "./byte-slabs.js";

/**
 * A settled task kept as its protobuf encoding in off-heap slabs (see ByteSlabs), behind a
 * one-byte header; the record keeps only the entry's address.
 * The status message is normally also the last history entry (it was appended there),
 * so it is stored once: header STATUS_MESSAGE_IN_HISTORY says to restore it from there.
 */
export type PackedTask = number;

const HEADER_PLAIN = 0;
const HEADER_STATUS_MESSAGE_IN_HISTORY = 1;

/** Packs `task` into `slabs`; returns the entry's address. */
export function packTask(slabs: ByteSlabs, task: Task): PackedTask {
  const message = task.status?.message;
  const last = task.history[task.history.length - 1];
  const shared = message !== undefined && last !== undefined && (message === last || equals(MessageSchema, message, last));
  const encoded = shared ? { ...task, status: { ...task.status!, message: undefined } } : task;
  return slabs.append(shared ? HEADER_STATUS_MESSAGE_IN_HISTORY : HEADER_PLAIN, encodeTask(encoded));
}

/** Decodes a fresh Task; nothing in it aliases storage. */
export function unpackTask(slabs: ByteSlabs, packed: PackedTask): Task {
  const task = fromBinary(TaskSchema, slabs.copy(packed));
  if (slabs.header(packed) === HEADER_STATUS_MESSAGE_IN_HISTORY) task.status!.message = cloneMessage(task.history[task.history.length - 1]!);
  return task;
}
