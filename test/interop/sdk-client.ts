/**
 * The official A2A JS SDK (@a2a-js/sdk) as a client of our server: discovery through the
 * HTTP agent card, then the SDK's own gRPC transport. Nothing here re-implements the SDK;
 * it only builds requests in the SDK's shapes and reads what the SDK hands back.
 */
import { ClientFactory, type Client, type Transport } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { Role, type Message, type SendMessageRequest, type StreamResponse, type Task } from "@a2a-js/sdk";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import type { Agent, AgentCardContribution, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

export interface SdkSetup {
  readonly server: A2ATestServer;
  /** An SDK client made from the card served by our HTTP card listener. */
  readonly client: Client;
  /** Scripts by the message's first text; any other text goes to the demo agent. */
  readonly scripts: Map<string, (ctx: AgentContext) => Promise<void>>;
  close(): Promise<void>;
}

export interface SdkSetupOptions {
  readonly env?: Record<string, string>;
  /** Card contribution on top of the demo agent's (e.g. an extendedCard). */
  readonly card?: Partial<AgentCardContribution>;
}

/** Our whole service with its card listener, and an SDK client discovered from that card. */
export async function startSdkSetup(options: SdkSetupOptions = {}): Promise<SdkSetup> {
  const demo = createDemoAgent({ stepDelayMs: 0, tickMs: 5 });
  const scripts = new Map<string, (ctx: AgentContext) => Promise<void>>();
  const agent: Agent = {
    card: { ...demo.card, ...options.card },
    execute(ctx) {
      const part = ctx.message.parts[0]?.content;
      const text = part?.case === "text" ? part.value : "";
      return (scripts.get(text) ?? demo.execute.bind(demo))(ctx);
    },
  };
  const server = await startA2AServer({
    agent,
    env: { A2A_CARD_LISTEN: "127.0.0.1:0", ...options.env },
    advertiseBoundAddress: true,
  });
  const factory = new ClientFactory({ transports: [new GrpcTransportFactory()] });
  const client = await factory.createFromUrl(`http://127.0.0.1:${server.app.cardPort}`);
  return {
    server,
    client,
    scripts,
    async close() {
      closeTransport(client.transport);
      await server.close();
    },
  };
}

/** The SDK transport has no close(); its grpc-js client must be closed or the channel stays open. */
export function closeTransport(transport: Transport): void {
  (transport as unknown as { grpcClient: { close(): void } }).grpcClient.close();
}

let counter = 0;

/** A user message in the SDK's (ts-proto) shape. */
export function userMessage(text: string, ids: { taskId?: string; contextId?: string } = {}): Message {
  counter += 1;
  return {
    messageId: `sdk-${process.pid}-${counter}`,
    contextId: ids.contextId ?? "",
    taskId: ids.taskId ?? "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * A SendMessageRequest for `text`. `returnImmediately` left out stays undefined, so the SDK
 * client fills it from its own config (blocking by default, `polling: true` for A-1's other mode).
 */
export function sendRequest(
  text: string,
  ids: { taskId?: string; contextId?: string } = {},
  configuration: { returnImmediately?: boolean; historyLength?: number } = {},
): SendMessageRequest {
  return {
    tenant: "",
    message: userMessage(text, ids),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: configuration.returnImmediately as boolean,
      ...(configuration.historyLength === undefined ? {} : { historyLength: configuration.historyLength }),
    },
    metadata: undefined,
  };
}

/** Every event of an SDK stream, in order; settles when the stream ends (or rejects with the SDK's error). */
export async function collect(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/** A promise the test settles by hand: lets a scripted agent wait at an exact point. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** The name of the payload case of a stream event ("task", "statusUpdate", ...). */
export const kind = (event: StreamResponse): string => event.payload?.$case ?? "none";

/** Resolves once the signal is aborted (a scripted agent that runs until canceled). */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
}

/** Polls through the SDK until `check` accepts the task (the SDK's polling mode leaves the loop to the caller). */
export async function pollTask(client: Client, id: string, check: (task: Task) => boolean, what: string): Promise<Task> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const task = await client.getTask({ tenant: "", id });
    if (check(task)) return task;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
