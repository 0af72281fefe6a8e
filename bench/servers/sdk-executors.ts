/**
 * The executors of the benchmarks' @a2a-js/sdk peers, doing what our bench agents do:
 *   TrivialExecutor (bench/agents/trivial-agent.mjs): a task that goes working, gets one small
 *     text artifact and completes;
 *   FanoutExecutor (bench/agents/fanout-agent.mjs): the task goes WORKING, waits for
 *       { bench: "fanout-go", taskId, events, intervalMs, yieldEach, padBytes, replace }
 *     on the IPC channel, publishes `events` artifact updates whose text starts with
 *     `#seq=<i>;t=<ms>;` (publish time, performance.timeOrigin + performance.now()), completes,
 *     and reports { bench: "fanout-published", taskId, publishMs, contentSha256 }. The SDK's
 *     event bus is synchronous, so "as fast as it takes them" is a loop of publish() calls.
 * Served over gRPC by sdk-server.ts and sdk-fanout-server.ts, over HTTP by sdk-http-server.ts.
 */
import { createHash, randomUUID } from "node:crypto";
import { TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { statusUpdate, submittedTask, textPart } from "./sdk-peer.js";

export class TrivialExecutor implements AgentExecutor {
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    if (!ctx.task) bus.publish(AgentEvent.task(submittedTask(ctx)));
    bus.publish(AgentEvent.statusUpdate(statusUpdate(ctx, TaskState.TASK_STATE_WORKING)));
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: { artifactId: randomUUID(), name: "answer", description: "", parts: [textPart("4")], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate(statusUpdate(ctx, TaskState.TASK_STATE_COMPLETED)));
  }

  async cancelTask(): Promise<void> {}
}

interface Go {
  readonly taskId: string;
  readonly events: number;
  readonly intervalMs: number;
  readonly yieldEach?: boolean;
  readonly padBytes: number;
  readonly replace: boolean;
  /** Hash the artifact's texts (contentSha256): the grpc-js fan-out checks content with it. */
  readonly hash?: boolean;
}
const waiting = new Map<string, (go: Go) => void>();
const early = new Map<string, Go>();
let listening = false;

/** Starts taking "fanout-go" messages from the benchmark (once per process). */
function listenForGo(): void {
  if (listening) return;
  listening = true;
  process.on("message", (msg: { bench?: string } & Go) => {
    if (msg?.bench !== "fanout-go") return;
    const resolve = waiting.get(msg.taskId);
    if (resolve) {
      waiting.delete(msg.taskId);
      resolve(msg);
    } else early.set(msg.taskId, msg);
  });
  process.channel?.unref();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class FanoutExecutor implements AgentExecutor {
  constructor() {
    listenForGo();
  }

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    bus.publish(AgentEvent.task(submittedTask(ctx)));
    bus.publish(AgentEvent.statusUpdate(statusUpdate(ctx, TaskState.TASK_STATE_WORKING)));
    const go = early.get(taskId) ?? (await new Promise<Go>((resolve) => waiting.set(taskId, resolve)));
    early.delete(taskId);
    const pad = "x".repeat(go.padBytes);
    const started = performance.now();
    const content = createHash("sha256");
    for (let i = 0; i < go.events; i++) {
      const text = `#seq=${i};t=${(performance.timeOrigin + performance.now()).toFixed(3)};${pad}`;
      if (go.hash && (!go.replace || i === go.events - 1)) content.update(text).update("\0");
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: "out", name: "out", description: "", parts: [textPart(text)], metadata: undefined, extensions: [] },
          append: go.replace ? false : i > 0,
          lastChunk: go.replace ? true : i === go.events - 1,
          metadata: undefined,
        }),
      );
      if (go.intervalMs > 0) await sleep(go.intervalMs);
      else if (go.yieldEach) await new Promise((resolve) => setImmediate(resolve));
    }
    const publishMs = performance.now() - started;
    bus.publish(AgentEvent.statusUpdate(statusUpdate(ctx, TaskState.TASK_STATE_COMPLETED)));
    process.send?.({ bench: "fanout-published", taskId, publishMs, contentSha256: content.digest("hex") });
  }

  async cancelTask(): Promise<void> {}
}
