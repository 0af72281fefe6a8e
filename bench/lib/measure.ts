import { readdirSync, readFileSync } from "node:fs";
import { runLoad, type LoadClient, type LoadOptions, type LoadResult } from "./load.js";
import { cpuMicros, type ServerProcess } from "./server-process.js";
import { percentiles } from "./stats.js";

export interface PhaseResult {
  readonly load: LoadResult;
  readonly callsPerSec: number;
  /** Server CPU (user + system, all its threads) per completed call, µs. */
  readonly serverCpuPerCall: number;
  /** The load client's CPU per call, µs: what it took from the shared cores. */
  readonly clientCpuPerCall: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/**
 * Runs one load phase and reads the server's CPU time just before and after it, so the
 * figure covers exactly the calls of the phase. Errors fail the phase: a benchmark of
 * failing calls measures the wrong thing.
 */
export async function measurePhase(server: ServerProcess, lc: LoadClient, options: LoadOptions): Promise<PhaseResult> {
  const before = await server.usage();
  const clientBefore = process.cpuUsage();
  const load = await runLoad(lc, options);
  const clientCpu = process.cpuUsage(clientBefore);
  const after = await server.usage();
  if (load.errors > 0) {
    throw new Error(`${server.name}: ${load.errors} of ${load.calls} calls to ${options.path} failed, first: ${load.firstError}`);
  }
  const [p50, p99] = percentiles(load.latenciesMs, [50, 99]);
  return {
    load,
    callsPerSec: (load.calls * 1000) / load.elapsedMs,
    serverCpuPerCall: cpuMicros(before, after) / load.calls,
    clientCpuPerCall: (clientCpu.user + clientCpu.system) / load.calls,
    p50Ms: p50!,
    p99Ms: p99!,
  };
}

/** Sends `count` calls, unmeasured (warm-up, or filling a store). */
export async function drive(server: ServerProcess, lc: LoadClient, options: Omit<LoadOptions, "calls">, count: number): Promise<void> {
  if (count <= 0) return;
  const load = await runLoad(lc, { ...options, calls: count });
  if (load.errors > 0) {
    throw new Error(`${server.name}: ${load.errors} of ${load.calls} calls to ${options.path} failed, first: ${load.firstError}`);
  }
}

/** Waits until `probe` resolves (the server answers a real call), or fails after `timeoutMs`. */
export async function waitUntilServing(server: ServerProcess, probe: () => Promise<unknown>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      await probe();
      return;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${server.name} did not answer within ${timeoutMs} ms: ${(last as Error)?.message ?? last}\n${server.stderr()}`);
}

/**
 * A process's CPU so far, µs, all its threads, from /proc/<pid>/task/<tid>/schedstat (ns, as the
 * scheduler accounts it): reading it does not wake the process. Undefined where /proc cannot be read.
 */
export function procCpuMicros(pid: number): number | undefined {
  const tasks = `/proc/${pid}/task`;
  let tids: string[];
  try {
    tids = readdirSync(tasks);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`${tasks}/${tid}/schedstat`, "latin1").split(" ", 1)[0]);
    } catch {
      // the thread ended between the listing and the read: its time is gone with it
    }
  }
  return ns / 1000;
}
