import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * A settled task kept as its protobuf encoding, held in a one-byte-per-char string.
 * Why a string and not a Uint8Array: a typed array costs ~200 bytes of V8 objects
 * (view, ArrayBuffer, backing store) before its first byte; a latin1 string costs 16.
 */
export type PackedTask = string;

export function packTask(task: Task): PackedTask {
  const bytes = toBinary(TaskSchema, task);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** Decodes a fresh Task; nothing in it aliases storage. */
export function unpackTask(packed: PackedTask): Task {
  return fromBinary(TaskSchema, Buffer.from(packed, "latin1"));
}
