/**
 * What the benchmarks' @a2a-js/sdk peers share: the card, the SDK's gRPC server set up the way
 * an SDK user would (DefaultRequestHandler + InMemoryTaskStore, no authentication) on
 * 127.0.0.1:$BENCH_PORT, and the small builders their executors publish with.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { TaskState, type AgentCard, type Task } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type RequestContext } from "@a2a-js/sdk/server";
import { A2AService, grpcService, UserBuilder } from "@a2a-js/sdk/server/grpc";

const address = `127.0.0.1:${process.env.BENCH_PORT}`;

export interface PeerAgent {
  readonly name: string;
  readonly description: string;
  readonly skill: { id: string; description: string };
}

/** The peer's card: one skill, the given interfaces (also used by the SDK's HTTP server, sdk-http-server.ts). */
export function sdkCard(agent: PeerAgent, supportedInterfaces: AgentCard["supportedInterfaces"]): AgentCard {
  return {
    name: agent.name,
    description: agent.description,
    supportedInterfaces,
    provider: undefined,
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: agent.skill.id,
        name: agent.skill.id,
        description: agent.skill.description,
        tags: ["bench"],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/** Serves `executor` behind a card with one skill, until SIGTERM. */
export function serveSdkPeer(executor: AgentExecutor, agent: PeerAgent): void {
  const card = sdkCard(agent, [{ url: address, protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" }]);
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const server = new Server();
  server.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.bindAsync(address, ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
  });
  process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
}

const now = () => new Date().toISOString();

export const textPart = (value: string) => ({ content: { $case: "text" as const, value }, metadata: undefined, filename: "", mediaType: "" });

/** The new task of a request, SUBMITTED, with the user's message in its history. */
export function submittedTask(ctx: RequestContext): Task {
  return {
    id: ctx.taskId,
    contextId: ctx.contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
    artifacts: [],
    history: [ctx.userMessage],
    metadata: undefined,
  };
}

/** A status update of the request's task. */
export function statusUpdate(ctx: RequestContext, state: TaskState) {
  return { taskId: ctx.taskId, contextId: ctx.contextId, status: { state, message: undefined, timestamp: now() }, metadata: undefined };
}
