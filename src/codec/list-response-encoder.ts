import type { ListTasksResponse, Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeTask } from "./task-encoder.js";
import { varintSize } from "./varint.js";

/**
 * ListTasks replies encoded once. The core measures each task of a page to cut it to the maximum
 * message size; `measureTask` keeps the bytes it made, and `encodeListTasksResponse` writes
 * the reply from them, so a task is encoded once per call, by the static encoder, instead of
 * being measured and then encoded again by toBinary. Same bytes as toBinary(ListTasksResponseSchema)
 * (test/codec/list-response-encoder.test.ts).
 */
const measured = new WeakMap<Task, Uint8Array>();

export function measureTask(task: Task): number {
  const bytes = encodeTask(task);
  measured.set(task, bytes);
  return bytes.byteLength;
}

/** undefined for what it does not mirror (unknown fields, negative int32s): toBinary encodes those. */
export function encodeListTasksResponse(response: ListTasksResponse): Uint8Array | undefined {
  if (response.$unknown !== undefined || response.pageSize < 0 || response.totalSize < 0) return undefined;
  const tasks = response.tasks.map((task) => measured.get(task) ?? encodeTask(task));
  const token = Buffer.from(response.nextPageToken, "utf8");
  let size = 0;
  for (const bytes of tasks) size += 1 + varintSize(bytes.byteLength) + bytes.byteLength;
  if (token.length > 0) size += 1 + varintSize(token.length) + token.length;
  if (response.pageSize !== 0) size += 1 + varintSize(response.pageSize);
  if (response.totalSize !== 0) size += 1 + varintSize(response.totalSize);
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  const varint = (value: number) => {
    while (value > 0x7f) {
      out[pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    out[pos++] = value;
  };
  for (const bytes of tasks) {
    out[pos++] = 0x0a; // field 1, length-delimited
    varint(bytes.byteLength);
    out.set(bytes, pos);
    pos += bytes.byteLength;
  }
  if (token.length > 0) {
    out[pos++] = 0x12; // field 2, length-delimited
    varint(token.length);
    out.set(token, pos);
    pos += token.length;
  }
  if (response.pageSize !== 0) {
    out[pos++] = 0x18; // field 3, varint
    varint(response.pageSize);
  }
  if (response.totalSize !== 0) {
    out[pos++] = 0x20; // field 4, varint
    varint(response.totalSize);
  }
  return out;
}
