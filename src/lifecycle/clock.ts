import { create } from "@bufbuild/protobuf";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";

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
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos: (micros - seconds * 1_000_000) * 1000 });
}

/** Rounded down: a stored timestamp's own microsecond. */
export function microsFromTimestamp(ts: Timestamp): number {
  return Number(ts.seconds) * 1_000_000 + Math.floor(ts.nanos / 1000);
}

/** Rounded up: for ">= t" filters, so that nothing earlier than t slips in. */
export function microsAtLeast(ts: Timestamp): number {
  return Number(ts.seconds) * 1_000_000 + Math.ceil(ts.nanos / 1000);
}
