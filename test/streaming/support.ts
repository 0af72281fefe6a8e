import * as grpc from "@grpc/grpc-js";
import vm from "node:vm";
import v8 from "node:v8";
import { ErrorInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import { A2AServiceClient, Role, type SendMessageRequest, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { Agent, AgentContext } from "../../src/lifecycle/ports/agent.js";
import type { A2ATestServer } from "../support/a2a-server.js";

/** One execution of the controlled agent: the test drives `ctx` itself, then calls `finish()`. */
export interface ControlledRun {
  readonly ctx: AgentContext;
  /** Lets execute() return (the task must be terminal or interrupted by then, or it is failed). */
  finish(): void;
}

/**
 * An agent whose every run is handed to the test: the test decides when each event is
 * published, so it can check that event k arrives before event k+1 exists.
 */
export function controlledAgent(): { agent: Agent; nextRun(): Promise<ControlledRun> } {
  const ready: ControlledRun[] = [];
  const waiting: Array<(run: ControlledRun) => void> = [];
  const agent: Agent = {
    card: { skills: [{ id: "ctl", name: "controlled", description: "driven by the test", tags: ["test"] }] } as Agent["card"],
    async execute(ctx) {
      let finish!: () => void;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const run = { ctx, finish };
      const waiter = waiting.shift();
      if (waiter) waiter(run);
      else ready.push(run);
      await done;
    },
  };
  return {
    agent,
    nextRun: () => {
      const run = ready.shift();
      return run ? Promise.resolve(run) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** A user message as the ts-proto client sends it. */
export function userMessage(text: string, extra: Partial<SendMessageRequest["message"]> = {}): NonNullable<SendMessageRequest["message"]> {
  return {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, filename: "", mediaType: "", metadata: undefined }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  } as NonNullable<SendMessageRequest["message"]>;
}

export function sendRequest(text: string, extra: Partial<SendMessageRequest["message"]> = {}): SendMessageRequest {
  return { tenant: "", message: userMessage(text, extra), configuration: undefined, metadata: undefined } as SendMessageRequest;
}

/** How a stream ended: its status, with the A2A ErrorInfo reason when there is one. */
export interface StreamEnd {
  readonly code: grpc.status;
  readonly details: string;
  readonly reason: string | undefined;
}

/**
 * Reads a ts-proto server stream: keeps every event, lets the test await the k-th one, and
 * settles `ended` with the final status (OK or not).
 */
export class StreamReader {
  /** Events kept (all of them, unless the reader was told to keep only the last one). */
  readonly events: StreamResponse[] = [];
  /** Events received so far. */
  received = 0;
  readonly ended: Promise<StreamEnd>;
  end: StreamEnd | undefined;
  private waiters: Array<{ count: number; resolve: () => void; reject: (e: Error) => void }> = [];

  constructor(
    readonly call: grpc.ClientReadableStream<StreamResponse>,
    consume = true,
    private readonly keepAll = true,
  ) {
    call.on("data", (event: StreamResponse) => {
      this.received++;
      if (!this.keepAll) this.events.length = 0;
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => (this.received >= w.count ? (w.resolve(), false) : true));
    });
    call.on("error", () => undefined); // the status event carries it
    this.ended = new Promise((resolve) => {
      call.on("status", (status: grpc.StatusObject) => {
        this.end = { code: status.code, details: status.details, reason: reasonOf(status.metadata) };
        for (const w of this.waiters) w.reject(new Error(`stream ended (${grpc.status[status.code]}: ${status.details}) after ${this.received} events`));
        this.waiters = [];
        resolve(this.end);
      });
    });
    if (!consume) call.pause();
  }

  /** Resolves once `count` events have arrived (with the kept events). */
  waitFor(count: number, timeoutMs = 10_000): Promise<StreamResponse[]> {
    if (this.received >= count) return Promise.resolve(this.events.slice(0, count));
    if (this.end) return Promise.reject(new Error(`stream already ended with ${this.received} events`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for event ${count} (have ${this.received})`)), timeoutMs);
      this.waiters.push({
        count,
        resolve: () => (clearTimeout(timer), resolve(this.events.slice(0, count))),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  }

  cases(): string[] {
    return this.events.map((e) => e.payload?.$case ?? "none");
  }
}

export function reasonOf(metadata: grpc.Metadata | undefined): string | undefined {
  const raw = metadata?.get("grpc-status-details-bin")[0];
  if (!raw) return undefined;
  const status = Status.decode(raw as Buffer);
  const info = status.details.find((d) => d.typeUrl.endsWith("google.rpc.ErrorInfo"));
  return info ? ErrorInfo.decode(info.value).reason : undefined;
}

export function streamSend(s: A2ATestServer, request: SendMessageRequest, consume = true, client: A2AServiceClient = s.client): StreamReader {
  return new StreamReader(client.sendStreamingMessage(request, s.metadata()), consume);
}

export function subscribe(s: A2ATestServer, taskId: string, consume = true, client: A2AServiceClient = s.client): StreamReader {
  return new StreamReader(client.subscribeToTask({ tenant: "", id: taskId }, s.metadata()), consume);
}

/** A client on its own HTTP/2 connection (grpc-js otherwise shares one connection per target). */
export function separateClient(s: A2ATestServer): A2AServiceClient {
  return new A2AServiceClient(s.target, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1, "grpc.enable_channelz": 0 });
}

/** The task id of a stream's first event (which must be the task). */
export function taskIdOf(reader: StreamReader): string {
  const first = reader.events[0]?.payload;
  if (first?.$case !== "task") throw new Error(`first event is ${first?.$case}, not task`);
  return first.value.id;
}

/** The event's version-like key, for order comparisons across streams. */
export function describeEvent(event: StreamResponse): string {
  const p = event.payload;
  switch (p?.$case) {
    case "task":
      return `task:${p.value.status?.state}`;
    case "statusUpdate":
      return `status:${p.value.status?.state}:${p.value.status?.message?.parts[0]?.content?.$case === "text" ? p.value.status.message.parts[0].content.value : ""}`;
    case "artifactUpdate":
      return `artifact:${p.value.artifact?.artifactId}:${p.value.artifact?.name}`;
    case "message":
      return "message";
    default:
      return "none";
  }
}

/** A real full GC, with or without --expose-gc (V8 allows turning the flag on at run time). */
export function forceGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

/** Lets pending I/O callbacks run (a macrotask turn), without a timed sleep. */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
