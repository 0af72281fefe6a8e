/**
 * Many stream subscribers spread over a few child processes (subscriber-child.ts), so that
 * receiving 500 streams does not queue behind one client event loop and the client's CPU
 * can be read apart from the server's.
 */
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { StartCommand, SubscriberReport } from "./subscriber-child.js";

const CHILD = {
  raw: fileURLToPath(new URL("./subscriber-child.ts", import.meta.url)),
  "grpc-js": fileURLToPath(new URL("./grpc-subscriber-child.ts", import.meta.url)),
};

export interface SubscribersOptions {
  readonly address: string;
  readonly path: string;
  readonly request: Buffer;
  readonly metadata: Record<string, string>;
  readonly subscribers: number;
  readonly processes: number;
  /** HTTP/2 connections per process. */
  readonly connectionsPerProcess: number;
  readonly expectArtifacts: number;
  readonly stall?: boolean;
  /** raw (default): gRPC over node:http2, reading only tags and markers; grpc-js: the generated client, every response decoded and applied. */
  readonly client?: "raw" | "grpc-js";
}

export interface SubscribersResult extends Omit<SubscriberReport, "cpuMicros" | "latenciesMs" | "contentHashes"> {
  /** grpc-js subscribers: hash of the rebuilt artifact -> streams (empty for raw ones). */
  readonly contentHashes: Record<string, number>;
  readonly subscribers: number;
  readonly latenciesMs: Float64Array;
  /** All subscriber processes' CPU µs from attached to done. */
  readonly clientCpuMicros: number;
}

export interface Subscribers {
  /** Tells stalled subscribers to read again. */
  resume(): void;
  /** Resolves when every stream has ended. */
  done(): Promise<SubscribersResult>;
  kill(): void;
}

/** Forks the processes, opens the streams, and resolves once every stream has received its first event. */
export async function openSubscribers(options: SubscribersOptions): Promise<Subscribers> {
  const children: ChildProcess[] = [];
  const reports: Promise<SubscriberReport>[] = [];
  const attached: Promise<void>[] = [];
  const per = Math.ceil(options.subscribers / options.processes);
  for (let left = options.subscribers; left > 0; left -= per) {
    const child = fork(CHILD[options.client ?? "raw"], [], {
      execArgv: ["--import", "tsx"],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    children.push(child);
    const exited = once(child, "exit").then(([code]) => {
      throw new Error(`subscriber process exited (${code}) before reporting`);
    });
    exited.catch(() => undefined);
    const message = (type: string) =>
      Promise.race([
        new Promise<unknown>((resolve) => {
          const on = (m: { type?: string }) => {
            if (m?.type !== type) return;
            child.off("message", on);
            resolve(m);
          };
          child.on("message", on);
        }),
        exited,
      ]);
    attached.push(message("attached").then(() => undefined));
    reports.push(message("done") as Promise<SubscriberReport>);
    const cmd: StartCommand = {
      cmd: "start",
      address: options.address,
      path: options.path,
      request: options.request,
      metadata: options.metadata,
      subscribers: Math.min(per, left),
      connections: options.connectionsPerProcess,
      expectArtifacts: options.expectArtifacts,
      stall: options.stall ?? false,
    };
    child.send(cmd);
  }
  for (const r of reports) r.catch(() => undefined);
  await Promise.all(attached);
  return {
    resume: () => children.forEach((c) => c.send({ cmd: "resume" })),
    kill: () => children.forEach((c) => c.exitCode === null && c.kill()),
    async done() {
      const all = await Promise.all(reports);
      const codes: Record<string, number> = {};
      for (const r of all) for (const [k, v] of Object.entries(r.codes)) codes[k] = (codes[k] ?? 0) + v;
      const latencies = new Float64Array(all.reduce((n, r) => n + r.latenciesMs.length, 0));
      let at = 0;
      for (const r of all) {
        latencies.set(r.latenciesMs, at);
        at += r.latenciesMs.length;
      }
      const contentHashes: Record<string, number> = {};
      for (const r of all) for (const [k, v] of Object.entries(r.contentHashes ?? {})) contentHashes[k] = (contentHashes[k] ?? 0) + v;
      return {
        subscribers: options.subscribers,
        contentHashes,
        complete: all.reduce((n, r) => n + r.complete, 0),
        outOfOrder: all.reduce((n, r) => n + r.outOfOrder, 0),
        codes,
        firstProblem: all.find((r) => r.firstProblem)?.firstProblem,
        firstErrorDetails: all.find((r) => r.firstErrorDetails)?.firstErrorDetails,
        artifactsMin: Math.min(...all.map((r) => r.artifactsMin)),
        artifactsMax: Math.max(...all.map((r) => r.artifactsMax)),
        events: all.reduce((n, r) => n + r.events, 0),
        latenciesMs: latencies,
        lastReceiveAt: Math.max(...all.map((r) => r.lastReceiveAt)),
        clientCpuMicros: all.reduce((n, r) => n + r.cpuMicros, 0),
      };
    },
  };
}
