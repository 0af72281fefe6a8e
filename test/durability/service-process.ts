import * as grpc from "@grpc/grpc-js";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { A2AServiceClient, Role, type SendMessageResponse, type StreamResponse, type Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { unary } from "../foundation/helpers.js";

/**
 * The real service as an operator runs it (`node --import tsx src/main.ts`) in a child
 * process on a data directory the test owns, so it can be SIGKILLed and started again on
 * the same directory. Talks to it only through the independent ts-proto client.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DURABLE_AGENT = "test/durability/fixtures/durable-agent.ts";
export const RESUMABLE_AGENT = "test/durability/fixtures/resumable-agent.ts";

export interface ServiceProcess {
  readonly proc: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  readonly exited: Promise<number | null>;
  /** Resolves with the first line (already printed or still to come) that matches. */
  line(pattern: RegExp, stream?: "stdout" | "stderr"): Promise<string>;
}

export interface RunningService extends ServiceProcess {
  readonly target: string;
  readonly client: A2AServiceClient;
  /** SIGKILL: no shutdown hook runs, nothing is flushed. */
  kill(): Promise<void>;
}

export function spawnService(dataDir: string, env: Record<string, string> = {}): ServiceProcess {
  const { NODE_OPTIONS: _jestOptions, ...parentEnv } = process.env;
  const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: ROOT,
    env: {
      ...parentEnv,
      A2A_LISTEN: "127.0.0.1:0",
      A2A_CARD_LISTEN: "off",
      A2A_LOG_FORMAT: "json",
      A2A_DATA_DIR: dataDir,
      A2A_AGENT_MODULE: DURABLE_AGENT,
      DURABILITY_ANNOUNCE: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines = { stdout: [] as string[], stderr: [] as string[] };
  const waiters: Array<{ pattern: RegExp; stream: "stdout" | "stderr"; resolve: (l: string) => void }> = [];
  for (const stream of ["stdout", "stderr"] as const) {
    let rest = "";
    proc[stream]!.on("data", (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      for (const l of parts) {
        lines[stream].push(l);
        for (const w of [...waiters]) {
          if (w.stream !== stream || !w.pattern.test(l)) continue;
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    });
  }
  const exited = once(proc, "exit").then(([code]) => code as number | null);
  return {
    proc,
    ...lines,
    exited,
    line(pattern, stream = "stdout") {
      const seen = lines[stream].find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, stream, resolve });
        void exited.then(() =>
          reject(new Error(`service exited before printing ${pattern}\nstdout: ${lines.stdout.join("\n")}\nstderr: ${lines.stderr.join("\n")}`)),
        );
      });
    },
  };
}

const running = new Set<RunningService>();

/** Starts the service and waits for its "listening on" line. */
export async function startService(dataDir: string, env: Record<string, string> = {}): Promise<RunningService> {
  const child = spawnService(dataDir, env);
  const { address } = JSON.parse(await child.line(/"msg":"listening on /)) as { address: string };
  const client = new A2AServiceClient(address, grpc.credentials.createInsecure());
  const service: RunningService = {
    ...child,
    target: address,
    client,
    async kill() {
      client.close();
      running.delete(service);
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill("SIGKILL");
      await child.exited;
    },
  };
  running.add(service);
  return service;
}

/** For afterEach: kills whatever a failed test left running. */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((s) => s.kill()));
}

export function tempDataDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "a2a-durability-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function a2aMetadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  return md;
}

let messageCount = 0;

export interface SendOptions {
  readonly returnImmediately?: boolean;
  /** Continue this task (its context id is sent along). */
  readonly task?: Pick<Task, "id" | "contextId">;
  readonly deadlineMs?: number;
}

export function sendRequest(text: string, options: SendOptions = {}) {
  return {
    tenant: "",
    message: {
      messageId: `m-${process.pid}-${++messageCount}`,
      contextId: options.task?.contextId ?? "",
      taskId: options.task?.id ?? "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text" as const, value: text }, filename: "", mediaType: "" }],
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: { acceptedOutputModes: [], returnImmediately: options.returnImmediately ?? false },
  };
}

export function send(client: A2AServiceClient, text: string, options: SendOptions = {}) {
  const deadline = options.deadlineMs === undefined ? {} : { deadline: Date.now() + options.deadlineMs };
  return unary(client, client.sendMessage, sendRequest(text, options), a2aMetadata(), deadline);
}

/** The task of a SendMessage response; throws when the call failed or answered a message. */
export function taskOf(result: { response?: SendMessageResponse; error?: grpc.ServiceError }): Task {
  if (result.error) throw result.error;
  const payload = result.response?.payload;
  if (payload?.$case !== "task") throw new Error(`expected a task, got ${JSON.stringify(result.response)}`);
  return payload.value;
}

export function getTask(client: A2AServiceClient, id: string) {
  return unary(client, client.getTask, { tenant: "", id }, a2aMetadata());
}

/** GetTask (full history) that throws when the call fails. */
export async function fetchTask(client: A2AServiceClient, id: string): Promise<Task> {
  const { response, error } = await getTask(client, id);
  if (error) throw error;
  return response!;
}

/** Every task, page by page (full history and artifacts), with the total_size of each page. */
export async function listAllTasks(client: A2AServiceClient, pageSize = 37): Promise<{ tasks: Task[]; totalSizes: number[] }> {
  const tasks: Task[] = [];
  const totalSizes: number[] = [];
  let pageToken = "";
  do {
    const { response, error } = await unary(
      client,
      client.listTasks,
      { tenant: "", contextId: "", status: 0, pageSize, pageToken, includeArtifacts: true },
      a2aMetadata(),
    );
    if (error) throw error;
    tasks.push(...response!.tasks);
    totalSizes.push(response!.totalSize);
    pageToken = response!.nextPageToken;
  } while (pageToken !== "");
  return { tasks, totalSizes };
}

/** An open SubscribeToTask call with what it delivered so far. */
/**
 * SubscribeToTask (or, with `call`, any server stream of StreamResponse) with its events
 * collected; `tenant` and `metadata` change the request's.
 */
export function subscribe(
  client: A2AServiceClient,
  id: string,
  options: { tenant?: string; metadata?: grpc.Metadata; call?: grpc.ClientReadableStream<StreamResponse> } = {},
) {
  const call = options.call ?? client.subscribeToTask({ tenant: options.tenant ?? "", id }, options.metadata ?? a2aMetadata());
  const events: StreamResponse[] = [];
  let ended = false;
  const waiters: Array<() => void> = [];
  const notify = () => waiters.splice(0).forEach((w) => w());
  call.on("data", (event: StreamResponse) => (events.push(event), notify()));
  const end = new Promise<grpc.ServiceError | undefined>((resolve) => {
    call.on("error", (error: grpc.ServiceError) => ((ended = true), notify(), resolve(error)));
    call.on("end", () => ((ended = true), notify(), resolve(undefined)));
  });
  return {
    call,
    events,
    end,
    get ended() {
      return ended;
    },
    /** Resolves once `count` events arrived (or the stream ended first). */
    async received(count: number): Promise<void> {
      while (events.length < count && !ended) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
