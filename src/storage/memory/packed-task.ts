import { equals, fromBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneMessage } from "../task-clone.js";
import { encodeTask } from "../task-encoder.js";
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

/** Packs `task`; also returns the bytes that encode `task` exactly, when the packed form holds them. */
export function packTask(slabs: ByteSlabs, task: Task): { packed: PackedTask; encoding: Uint8Array | undefined } {
  const message = task.status?.message;
  const last = task.history[task.history.length - 1];
  const shared = message !== undefined && last !== undefined && (message === last || equals(MessageSchema, message, last));
  const encoded = shared ? { ...task, status: { ...task.status!, message: undefined } } : task;
  const bytes = encodeTask(encoded);
  const packed = slabs.append(shared ? HEADER_STATUS_MESSAGE_IN_HISTORY : HEADER_PLAIN, bytes);
  return { packed, encoding: shared ? undefined : bytes };
}

/** Decodes a fresh Task; nothing in it aliases storage. */
export function unpackTask(slabs: ByteSlabs, packed: PackedTask): Task {
  return unpackTaskWithEncoding(slabs, packed).task;
}

/** As unpackTask, with the bytes that encode the decoded task exactly, when the packed form holds them. */
export function unpackTaskWithEncoding(slabs: ByteSlabs, packed: PackedTask): { task: Task; encoding: Uint8Array | undefined } {
  const bytes = slabs.copy(packed);
  const task = fromBinary(TaskSchema, bytes);
  if (slabs.header(packed) !== HEADER_STATUS_MESSAGE_IN_HISTORY) return { task, encoding: bytes };
  task.status!.message = cloneMessage(task.history[task.history.length - 1]!);
  return { task, encoding: undefined }; // the bytes lack the status message
}
