import { randomFillSync } from "node:crypto";
import type { IdGenerator } from "@opentelemetry/sdk-trace-base";

/** Random bytes drawn at once (hex: twice as many characters), for 1,024 span ids or 512 trace ids. */
const POOL_BYTES = 8192;

/**
 * Trace and span ids cut from a pool of random hex drawn 8 KiB at a time (crypto.randomFillSync,
 * one hex conversion per pool): the SDK's RandomIdGenerator draws Math.random four bytes at a time
 * and converts each id to hex on its own, three ids per traced call. All-zero ids (invalid in W3C
 * trace context) are never returned.
 */
export class PooledIdGenerator implements IdGenerator {
  readonly #bytes = Buffer.allocUnsafe(POOL_BYTES);
  #hex = "";
  #at = 0;

  generateTraceId(): string {
    return this.#take(32);
  }

  generateSpanId(): string {
    return this.#take(16);
  }

  #take(chars: number): string {
    if (this.#at + chars > this.#hex.length) {
      randomFillSync(this.#bytes);
      this.#hex = this.#bytes.toString("hex");
      this.#at = 0;
    }
    const id = this.#hex.slice(this.#at, this.#at + chars);
    this.#at += chars;
    return id === ZERO_SPAN || id === ZERO_TRACE ? `${id.slice(0, -1)}1` : id;
  }
}

const ZERO_SPAN = "0".repeat(16);
const ZERO_TRACE = "0".repeat(32);
