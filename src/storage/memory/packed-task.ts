import { clone, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * A settled task kept as its protobuf encoding in a one-byte-per-char string, after a
 * one-char header. Why a string and not a Uint8Array: a typed array costs ~200 bytes
 * of V8 objects (view, ArrayBuffer, backing store) before its first byte; a string 16.
 * The status message is normally also the last history entry (it was appended there),
 * so it is stored once: header STATUS_MESSAGE_IN_HISTORY says to restore it from there.
 */
export type PackedTask = string;

const STATUS_MESSAGE_IN_HISTORY = "\u0001";
const HEADER_PLAIN = 0;
const HEADER_STATUS_MESSAGE_IN_HISTORY = 1;

export function packTask(task: Task): PackedTask {
  return packTaskWithEncoding(task).packed;
}

/** As packTask, with the bytes that encode `task` exactly, when the packed form holds them. */
export function packTaskWithEncoding(task: Task): { packed: PackedTask; encoding: Uint8Array | undefined } {
  const message = task.status?.message;
  const last = task.history[task.history.length - 1];
  const shared = message !== undefined && last !== undefined && (message === last || equals(MessageSchema, message, last));
  const encoded = shared ? { ...task, status: { ...task.status!, message: undefined } } : task;
  const bytes = toBinary(TaskSchema, encoded);
  // Why header and body in one buffer and not header + string: a concatenation is a V8 cons
  // string (32 more bytes per task) until something reads it flat, and a settled task may
  // never be read again.
  const buffer = Buffer.allocUnsafe(1 + bytes.byteLength);
  buffer[0] = shared ? HEADER_STATUS_MESSAGE_IN_HISTORY : HEADER_PLAIN;
  buffer.set(bytes, 1);
  return { packed: buffer.toString("latin1"), encoding: shared ? undefined : bytes };
}

/** Decodes a fresh Task; nothing in it aliases storage. */
export function unpackTask(packed: PackedTask): Task {
  return unpackTaskWithEncoding(packed).task;
}

/** As unpackTask, with the bytes that encode the decoded task exactly, when the packed form holds them. */
export function unpackTaskWithEncoding(packed: PackedTask): { task: Task; encoding: Uint8Array | undefined } {
  const bytes = Buffer.from(packed, "latin1").subarray(1);
  const task = fromBinary(TaskSchema, bytes);
  if (packed[0] !== STATUS_MESSAGE_IN_HISTORY) return { task, encoding: bytes };
  task.status!.message = clone(MessageSchema, task.history[task.history.length - 1]!);
  return { task, encoding: undefined }; // the bytes lack the status message
}
