/**
 * The HTTP benchmarks' one load client (bench/http.ts): an undici Pool with keep-alive
 * connections, the same request bytes to every server, closed-loop like lib/load.ts.
 */
import { Pool } from "undici";
import type { LoadResult } from "./load.js";

export interface HttpCall {
  /** The path on the pool's origin, e.g. /a2a/jsonrpc. */
  readonly path: string;
  readonly headers: Record<string, string>;
  /** The request body, encoded once. */
  readonly body: Buffer;
}

/** `connections` keep-alive HTTP/1.1 connections to `origin` (http://127.0.0.1:port). */
export function httpPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
}

/** One call's answer body, for set-up and checks; a status other than 200 throws. */
export async function postOnce(pool: Pool, call: HttpCall): Promise<string> {
  const res = await pool.request({ method: "POST", path: call.path, headers: call.headers, body: call.body });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  return text;
}

/**
 * Closed-loop load: `inFlight` calls outstanding, each completion starts the next, until `calls`
 * completed. A call fails unless it is a 200 whose body holds `expect` (a JSON-RPC error is a 200
 * too): the client reads each body, but does not parse it.
 */
export function runHttpLoad(pool: Pool, call: HttpCall, options: { inFlight: number; calls: number; expect: string }): Promise<LoadResult> {
  const latencies = new Float64Array(options.calls);
  let started = 0;
  let done = 0;
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  let responseBytes = 0;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const finish = () => resolve({ calls: done, errors, firstError, elapsedMs: performance.now() - t0, latenciesMs: latencies.subarray(0, ok), responseBytes });
    const startOne = () => {
      started++;
      const t = performance.now();
      pool
        .request({ method: "POST", path: call.path, headers: call.headers, body: call.body })
        .then(async (res) => {
          const text = await res.body.text();
          if (res.statusCode !== 200 || !text.includes(options.expect)) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
          latencies[ok++] = performance.now() - t;
          responseBytes = Buffer.byteLength(text);
        })
        .catch((error: unknown) => {
          errors++;
          firstError ??= (error as Error)?.message ?? String(error);
        })
        .finally(() => {
          done++;
          if (started < options.calls) startOne();
          else if (done === started) finish();
        });
    };
    for (let i = 0; i < Math.min(options.inFlight, options.calls); i++) startOne();
  });
}
