import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** Where every benchmarked server loads its probe from (see child-probe.mjs). */
const PROBE = fileURLToPath(new URL("./child-probe.mjs", import.meta.url));

export interface Usage {
  /** process.cpuUsage() of the server: user and system µs since it started. */
  readonly cpu: NodeJS.CpuUsage;
  readonly mem: NodeJS.MemoryUsage;
  /** v8.getHeapSpaceStatistics() (with "usage" and "gc"): where heap memory sits, for diagnosis. */
  readonly spaces?: ReadonlyArray<{ space_name: string; space_size: number; space_used_size: number; physical_space_size: number }>;
}

export interface ServerProcessOptions {
  /** Shown in tables and errors. */
  readonly name: string;
  /** The script the child runs (a .js file, or .ts when `tsx` is set). */
  readonly script: string;
  readonly args?: readonly string[];
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=..."]. --expose-gc is always on. */
  readonly nodeFlags?: readonly string[];
  /** Load the child through tsx (TypeScript sources). Only affects module loading. */
  readonly tsx?: boolean;
  /** Environment on top of the parent's, given the chosen port; BENCH_PORT is added. */
  readonly env?: Record<string, string> | ((port: number) => Record<string, string>);
  readonly cwd?: string;
  /** Pipe the child's stdout (instead of inheriting it) so that `waitForLine` can watch it. */
  readonly captureStdout?: boolean;
  /** With `captureStdout`: called with every chunk of the child's stdout (e.g. V8's --trace-* output, too long to keep as lines). */
  readonly onStdout?: (chunk: string) => void;
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  /** 127.0.0.1:port the child was told to listen on (env BENCH_PORT). */
  readonly address: string;
  usage(): Promise<Usage>;
  /** Usage after forced full GCs in the child: heapUsed is then the live heap. */
  usageAfterGc(): Promise<Usage>;
  /** Starts the V8 CPU profiler in the child (100 µs sampling). */
  profileStart(): Promise<void>;
  /** Stops it and writes the profile (.cpuprofile JSON) to `file`. */
  profileStop(file: string): Promise<void>;
  /** Starts V8's sampling heap profiler, counting also what the GC has collected since: allocation, not retention. */
  heapSampleStart(): Promise<void>;
  /** Stops it and writes the profile (.heapprofile JSON, opens in Chrome DevTools) to `file`. */
  heapSampleStop(file: string): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Everything the child wrote to stderr (for error reports). */
  stderr(): string;
  /** performance.now() of this process just before the child was forked. */
  readonly spawnedAt: number;
  /** Sends a message of the benchmark's own over the IPC channel (the probe ignores messages without a numeric `id`). */
  send(message: object): void;
  /** Calls `listener` with every IPC message from the child that is not a probe answer. */
  onMessage(listener: (message: unknown) => void): void;
  /**
   * With `captureStdout`: resolves with performance.now() (this process) of the moment the
   * first stdout line matching `pattern` arrived; also for a line seen before the call.
   */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<number>;
}

/** A port that was free a moment ago. Servers that log at warn level cannot report port 0's choice. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

/**
 * Starts a server in its own process with an IPC channel, so that its CPU time and memory
 * are measured apart from the load client's. The caller waits for readiness itself (by
 * calling the server), since only it knows what a ready answer looks like.
 */
export async function startServerProcess(options: ServerProcessOptions): Promise<ServerProcess> {
  const port = await freePort();
  const execArgv = ["--expose-gc", ...(options.tsx ? ["--import", "tsx"] : []), "--import", PROBE, ...(options.nodeFlags ?? [])];
  const spawnedAt = performance.now();
  const child: ChildProcess = fork(options.script, [...(options.args ?? [])], {
    execArgv,
    env: { ...process.env, ...(typeof options.env === "function" ? options.env(port) : options.env), BENCH_PORT: String(port) },
    cwd: options.cwd,
    stdio: ["ignore", options.captureStdout ? "pipe" : "inherit", "pipe", "ipc"],
  });
  const lines: { at: number; line: string }[] = [];
  const lineWaiters = new Set<() => void>();
  if (options.captureStdout) {
    let partial = "";
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      options.onStdout?.(chunk);
      const at = performance.now();
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      // Keep the first lines only: start-up is what is watched, and a chatty server must not fill memory.
      for (const line of parts) if (lines.length < 1_000) lines.push({ at, line });
      for (const wake of lineWaiters) wake();
    });
  }
  const otherListeners: ((message: unknown) => void)[] = [];
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  let exited: { code: number | null; signal: string | null } | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      for (const waiter of pending.values()) waiter.reject(new Error(`${options.name} exited (${code ?? signal}):\n${stderr}`));
      pending.clear();
      resolve();
    }),
  );
  const pending = new Map<number, { resolve(u: Usage): void; reject(e: Error): void }>();
  let nextId = 1;
  child.on("message", (msg: { id: number; error?: string } & Partial<Usage>) => {
    if (msg === null || typeof msg !== "object" || typeof msg.id !== "number") {
      for (const listener of otherListeners) listener(msg);
      return;
    }
    const waiter = pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.error !== undefined) waiter.reject(new Error(`${options.name}: ${msg.error}`));
    else waiter.resolve({ cpu: msg.cpu!, mem: msg.mem!, spaces: msg.spaces });
  });
  const ask = (cmd: "usage" | "gc" | "profileStart" | "profileStop" | "heapSampleStart" | "heapSampleStop", extra: object = {}) =>
    new Promise<Usage>((resolve, reject) => {
      if (exited) return reject(new Error(`${options.name} has exited (${exited.code ?? exited.signal}):\n${stderr}`));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, ...extra });
    });
  if (child.pid === undefined) throw new Error(`${options.name} could not be started`);
  return {
    name: options.name,
    pid: child.pid,
    address: `127.0.0.1:${port}`,
    usage: () => ask("usage"),
    usageAfterGc: () => ask("gc"),
    profileStart: async () => void (await ask("profileStart")),
    profileStop: async (file) => void (await ask("profileStop", { file })),
    heapSampleStart: async () => void (await ask("heapSampleStart")),
    heapSampleStop: async (file) => void (await ask("heapSampleStop", { file })),
    stderr: () => stderr,
    spawnedAt,
    send: (message) => void child.send(message),
    onMessage: (listener) => void otherListeners.push(listener),
    waitForLine: (pattern, timeoutMs = 60_000) =>
      new Promise<number>((resolve, reject) => {
        const check = () => {
          const hit = lines.find((l) => pattern.test(l.line));
          if (hit) {
            done();
            resolve(hit.at);
          } else if (exited) {
            done();
            reject(new Error(`${options.name} exited before printing ${pattern}:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${options.name} did not print ${pattern} within ${timeoutMs} ms:\n${stderr}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          lineWaiters.delete(check);
        };
        lineWaiters.add(check);
        void exit.then(check);
        check();
      }),
    async stop(graceMs = 10_000) {
      if (exited) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** CPU µs (user + system) between two readings. */
export function cpuMicros(before: Usage, after: Usage): number {
  return after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
}
