import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, type CliIo } from "../../src/cli/index.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout as JSON (one document). */
  json<T = Record<string, any>>(): T;
  /** stdout as JSON Lines. */
  lines<T = Record<string, any>>(): T[];
}

export interface CliRunOptions {
  readonly env?: Record<string, string | undefined>;
  /** Pretend stdout and stderr are terminals. */
  readonly tty?: boolean;
  /** Called with a function that presses Ctrl-C, once the command is running. */
  readonly onStart?: (interrupt: () => void, output: () => string) => void;
}

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { isTTY, columns: 100, chunks, write: (c: string | Uint8Array) => (chunks.push(String(c)), true) };
}

/** Runs the CLI in this process, as its bin does, with captured output. */
export async function a2a(argv: string[], options: CliRunOptions = {}): Promise<CliRun> {
  const stdout = sink(Boolean(options.tty));
  const stderr = sink(Boolean(options.tty));
  const handlers = new Set<() => void>();
  const io: CliIo = {
    stdout: stdout as unknown as CliIo["stdout"],
    stderr: stderr as unknown as CliIo["stderr"],
    env: options.env ?? {},
    onInterrupt(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
  };
  options.onStart?.(
    () => [...handlers].forEach((h) => h()),
    () => stdout.chunks.join(""),
  );
  const code = await runCli(argv, io);
  const out = stdout.chunks.join("");
  return {
    code,
    stdout: out,
    stderr: stderr.chunks.join(""),
    json: () => JSON.parse(out),
    lines: () =>
      out
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

/** The CLI as a real process (node + tsx on the sources), for signals and terminals. */
export function cliCommand(args: string[]): string[] {
  return [process.execPath, "--import", "tsx", join(ROOT, "src/cli/main.ts"), ...args];
}

export function runCliProcess(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const [cmd, ...rest] = cliCommand(args);
  return new Promise((resolve) => {
    execFile(cmd!, rest, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** A loopback port nothing listens on (bound, read, released). */
export async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** Waits until `predicate` holds, polling. */
export async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The official @a2a-js/sdk gRPC server (test/cli/fixtures/sdk-server.ts) as a child process on a
 * free port; with `http`, also its express JSON-RPC and REST bindings (`httpBase` is their origin).
 */
export async function startSdkServer(options: { http?: boolean } = {}): Promise<{ target: string; httpBase: string; close(): Promise<void> }> {
  const port = await closedPort();
  const httpPort = options.http ? await closedPort() : undefined;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(ROOT, "test/cli/fixtures/sdk-server.ts")], {
    cwd: ROOT,
    env: { ...process.env, SDK_PORT: String(port), ...(httpPort ? { SDK_HTTP_PORT: String(httpPort) } : {}) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let ready = "";
  child.stdout!.on("data", (d: Buffer) => (ready += d.toString()));
  await until(() => ready.includes(`listening on 127.0.0.1:${port}`) && (!httpPort || ready.includes("http listening")), "the SDK server", 20_000);
  return {
    target: `127.0.0.1:${port}`,
    httpBase: httpPort ? `http://127.0.0.1:${httpPort}` : "",
    async close() {
      child.kill("SIGTERM");
      if (child.exitCode === null) await once(child, "exit");
    },
  };
}
