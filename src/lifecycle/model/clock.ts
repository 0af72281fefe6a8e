import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { timestampLiteral } from "./message-literals.js";

/**
 * Status timestamps: microseconds since the epoch, strictly increasing within a process.
 * ListTasks orders by status timestamp; a strictly increasing clock keeps that order the
 * order of writes, so the in-memory index stays sorted by appending.
 */
export class StatusClock {
  private last = 0;

  nowMicros(): number {
    const micros = Math.max(Date.now() * 1000, this.last + 1);
    this.last = micros;
    return micros;
  }

  now(): Timestamp {
    return timestampFromMicros(this.nowMicros());
  }
}

export function timestampFromMicros(micros: number): Timestamp {
  const seconds = Math.floor(micros / 1_000_000);
  return timestampLiteral(secondsOf(seconds), (micros - seconds * 1_000_000) * 1000);
}

// Timestamps made within the same second share its BigInt (immutable, so sharing is safe): a
// busy server makes several per call, nearly all in the second of the one before.
let lastSecond = -1;
let lastSecondBig = 0n;

function secondsOf(seconds: number): bigint {
  if (seconds !== lastSecond) {
    lastSecondBig = BigInt(seconds);
    lastSecond = seconds;
  }
  return lastSecondBig;
}

/** Rounded down: a stored timestamp's own microsecond. */
export function microsFromTimestamp(ts: Timestamp): number {
  return Number(ts.seconds) * 1_000_000 + Math.floor(ts.nanos / 1000);
}

/** The ListTasks sort key of a task: its status timestamp in microseconds; 0 (the epoch) when unset. */
export function statusMicros(task: Task): number {
  const ts = task.status?.timestamp;
  return ts === undefined ? 0 : microsFromTimestamp(ts);
}

/** Rounded up: for ">= t" filters, so that nothing earlier than t slips in. */
export function microsAtLeast(ts: Timestamp): number {
  return Number(ts.seconds) * 1_000_000 + Math.ceil(ts.nanos / 1000);
}
