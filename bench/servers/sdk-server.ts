/**
 * The peer: the official @a2a-js/sdk gRPC server (DefaultRequestHandler + InMemoryTaskStore)
 * with an agent doing the same work as bench/agents/trivial-agent.mjs: a task that goes
 * working, gets one small text artifact and completes. Listens on 127.0.0.1:$BENCH_PORT.
 */
import { randomUUID } from "node:crypto";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { Role, TaskState, type AgentCard, type Task } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { A2AService, grpcService, UserBuilder } from "@a2a-js/sdk/server/grpc";

const address = `127.0.0.1:${process.env.BENCH_PORT}`;

const card: AgentCard = {
  name: "bench",
  description: "Trivial agent for the benchmark",
  supportedInterfaces: [{ url: address, protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" }],
  provider: undefined,
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "answer", name: "answer", description: "Answers", tags: ["bench"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};

const now = () => new Date().toISOString();
const textPart = (value: string) => ({ content: { $case: "text" as const, value }, metadata: undefined, filename: "", mediaType: "" });

class TrivialExecutor implements AgentExecutor {
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = ctx;
    if (!ctx.task) {
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
    }
    const status = (state: TaskState) => ({ taskId, contextId, status: { state, message: undefined, timestamp: now() }, metadata: undefined });
    bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_WORKING)));
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
    bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_COMPLETED)));
  }

  async cancelTask(): Promise<void> {}
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new TrivialExecutor());
const server = new Server();
server.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
server.bindAsync(address, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
