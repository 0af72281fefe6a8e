/**
 * The peer: the official @a2a-js/sdk gRPC server (DefaultRequestHandler + InMemoryTaskStore)
 * with an agent doing the same work as bench/agents/trivial-agent.mjs: a task that goes
 * working, gets one small text artifact and completes. Listens on 127.0.0.1:$BENCH_PORT.
 */
import { randomUUID } from "node:crypto";
import { TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from "@a2a-js/sdk/server";
import { serveSdkPeer, statusUpdate, submittedTask, textPart } from "./sdk-peer.js";

class TrivialExecutor implements AgentExecutor {
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

serveSdkPeer(new TrivialExecutor(), { name: "bench", description: "Trivial agent for the benchmark", skill: { id: "answer", description: "Answers" } });
