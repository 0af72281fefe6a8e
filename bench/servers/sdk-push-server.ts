/**
 * The push benchmark's peer: the official @a2a-js/sdk gRPC server with its push support as an
 * SDK user turns it on (InMemoryPushNotificationStore + DefaultPushNotificationSender, the card
 * declaring push notifications), and an executor doing what bench/agents/push-agent.mjs does.
 * Listens on 127.0.0.1:$BENCH_PORT.
 */
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { TaskState, type AgentCard } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from "@a2a-js/sdk/server";
import { A2AService, grpcService, UserBuilder } from "@a2a-js/sdk/server/grpc";
import { statusUpdate, submittedTask, textPart } from "./sdk-peer.js";

const address = `127.0.0.1:${process.env.BENCH_PORT}`;
// The SDK's sender logs one console.info line per delivery; silenced, so its CPU per delivery is
// not inflated by logging (our server logs nothing per delivery either).
console.info = () => {};
const stamp = () => (performance.timeOrigin + performance.now()).toFixed(3);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class PushExecutor implements AgentExecutor {
  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const part = ctx.userMessage.parts[0]?.content;
    const [, eventsText = "10", intervalText = "0"] = (part?.$case === "text" ? part.value : "").split(" ");
    const events = Number(eventsText);
    const interval = Number(intervalText);
    const { taskId, contextId } = ctx;
    if (!ctx.task) bus.publish(AgentEvent.task(submittedTask(ctx)));
    const withText = (state: TaskState, text: string) => {
      const update = statusUpdate(ctx, state);
      return {
        ...update,
        status: {
          ...update.status,
          message: { messageId: `m-${text}`, contextId, taskId, role: 2, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
        },
      };
    };
    for (let i = 0; i < events; i++) {
      if (i % 2 === 0) bus.publish(AgentEvent.statusUpdate(withText(TaskState.TASK_STATE_WORKING, `e${i}@${stamp()}`)));
      else {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: { artifactId: `a${i}`, name: "", description: "", parts: [textPart(`e${i}@${stamp()}`)], metadata: undefined, extensions: [] },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        );
      }
      if (interval > 0) await sleep(interval);
    }
    bus.publish(AgentEvent.statusUpdate(withText(TaskState.TASK_STATE_COMPLETED, `e${events}@${stamp()}`)));
  }

  async cancelTask(): Promise<void> {}
}

const card: AgentCard = {
  name: "push bench",
  description: "Publishes updates for the push benchmark",
  supportedInterfaces: [{ url: address, protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" }],
  provider: undefined,
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: true, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "push", name: "push", description: "Publishes", tags: ["bench"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};
const pushStore = new InMemoryPushNotificationStore();
const handler = new DefaultRequestHandler(
  card,
  new InMemoryTaskStore(),
  new PushExecutor(),
  undefined,
  pushStore,
  new DefaultPushNotificationSender(pushStore, { timeout: 10_000 }),
);
const server = new Server();
server.addService(A2AService, grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
server.bindAsync(address, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
