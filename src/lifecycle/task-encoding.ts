import type { Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * Exact protobuf encodings of tasks, so that a reply can reuse the bytes a store already
 * holds instead of encoding the task once more. Two steps make stale bytes impossible:
 *
 * - a store notes bytes only for a task object it has just made from exactly those bytes
 *   (or encoded into them), before handing it out, and only when it did not re-shape it
 *   (history_length applied, artifacts left out);
 * - the service seals a task it passes to a reply as it came from the store, right after
 *   the store handed it out. Sealing deep-freezes the task, so nothing can change it from
 *   then on; only sealed tasks' bytes are ever used. A task copied or re-shaped later is a
 *   new object, with nothing noted.
 *
 * The encoding is TaskSchema's wire form (what toBinary(TaskSchema, task) gives).
 */
const noted = new WeakMap<Task, Uint8Array>();
const sealed = new WeakMap<Task, Uint8Array>();

/** Storage: `bytes` are exactly the encoding of `task`, an object no one else has seen yet. */
export function noteEncoding(task: Task, bytes: Uint8Array): void {
  noted.set(task, bytes);
}

/**
 * The service: `task` goes into a reply exactly as the store handed it out. Freezes it
 * (deeply) and returns it; its noted bytes, if any, become usable.
 */
export function sealForReply(task: Task): Task {
  const bytes = noted.get(task);
  if (bytes === undefined) return task;
  // A non-empty byte array cannot be frozen: such a task keeps no bytes (it is encoded as usual).
  if (deepFreeze(task)) sealed.set(task, bytes);
  return task;
}

/** The encoding of a sealed task, or undefined: encode it as usual. */
export function sealedEncoding(task: Task): Uint8Array | undefined {
  return sealed.get(task);
}

/** Freezes every object and array reachable from `value`; false if a non-empty typed array was found (left as is). */
function deepFreeze(value: object): boolean {
  let frozen = true;
  // Why index and for-in loops: Object.keys allocates an array per object (half the cost here).
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === "object" && child !== null && !deepFreeze(child)) frozen = false;
    }
  } else if (ArrayBuffer.isView(value)) {
    return value.byteLength === 0;
  } else {
    for (const key in value) {
      const child = (value as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null && !deepFreeze(child)) frozen = false;
    }
  }
  Object.freeze(value);
  return frozen;
}
