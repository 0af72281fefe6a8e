import { randomFillSync } from "node:crypto";
import type { IdGenerator } from "@opentelemetry/sdk-trace-base";

/** Random bytes drawn at once (hex: twice as many characters), for 1,024 span ids or 512 trace ids. */
const POOL_BYTES = 8192;

/**
 * Trace and span ids cut from a pool of random hex drawn 8 KiB at a time (crypto.randomFillSync,
 * one hex conversion per pool): the SDK's RandomIdGenerator draws Math.random four bytes at a time
 * and converts each id to hex on its own, three ids per traced call. All-zero ids (invalid in W3C
 * trace context) are never returned.
 *
 * The bytes of the last id stay readable (`lastPool` at `lastAt`): the OTLP writer copies an id's
 * bytes from there instead of parsing its hex again (see IdBytes in service-span.ts). Each pool is
 * a buffer of its own, never refilled, so a span may keep pointing into it.
 */
export class PooledIdGenerator implements IdGenerator {
  #bytes = Buffer.allocUnsafe(0);
  #hex = "";
  #at = 0;
  /** The pool holding the bytes of the id last returned, or undefined when they differ from it (a zero id made valid). */
  lastPool: Buffer | undefined = undefined;
  /** Where in lastPool that id's bytes start. */
  lastAt = 0;

  generateTraceId(): string {
    return this.#take(32);
  }

  generateSpanId(): string {
    return this.#take(16);
  }

  #take(chars: number): string {
    if (this.#at + chars > this.#hex.length) {
      this.#bytes = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
      this.#hex = this.#bytes.toString("hex");
      this.#at = 0;
    }
    const id = this.#hex.slice(this.#at, this.#at + chars);
    this.lastAt = this.#at >> 1;
    this.#at += chars;
    if (id === ZERO_SPAN || id === ZERO_TRACE) {
      this.lastPool = undefined;
      return `${id.slice(0, -1)}1`;
    }
    this.lastPool = this.#bytes;
    return id;
  }
}

const ZERO_SPAN = "0".repeat(16);
const ZERO_TRACE = "0".repeat(32);
