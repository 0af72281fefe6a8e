import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { AgentCard } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { buildAgentCard, buildExtendedAgentCard } from "./agents/agent-card.js";
import { loadAgent } from "./agents/agent-loader.js";
import type { Config } from "./config/config.js";
import { EventHub } from "./events/event-hub.js";
import type { Agent } from "./lifecycle/agent.js";
import type { CoreLogger } from "./lifecycle/logger.js";
import { PageTokenCodec } from "./lifecycle/page-token.js";
import { RetentionSweeper } from "./lifecycle/retention.js";
import type { TaskRepository } from "./lifecycle/task-repository.js";
import { TaskService } from "./lifecycle/task-service.js";
import { createA2AHandlers } from "./protocol/a2a-handlers.js";
import { startAgentCardServer, type AgentCardServer } from "./protocol/agent-card-http.js";
import type { CallObserver } from "./protocol/call-observer.js";
import type { A2AServiceHandlers } from "./protocol/grpc-adapter.js";
import { MemoryTaskRepository } from "./storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "./storage/sqlite/sqlite-task-repository.js";
import { BacklogBudget, streamResumeDeclaration } from "./streams/index.js";
import type { EventLogOptions } from "./lifecycle/event-log.js";

/** Everything the gRPC server needs to serve A2A, built from the configuration. */
export interface A2AApp {
  readonly handlers: Partial<A2AServiceHandlers>;
  readonly card: AgentCard;
  readonly service: TaskService;
  readonly hub: EventHub;
  readonly repository: TaskRepository;
  /** Port of the HTTP agent card listener, when it runs. */
  readonly cardPort: number | undefined;
  /** Stops agents (failing or keeping their tasks by the restart rule), the card listener and the store. */
  close(graceMs: number): Promise<void>;
}

export interface AppOverrides {
  /** An agent object instead of config.agentModule (tests, embedding). */
  readonly agent?: Agent;
  readonly repository?: TaskRepository;
}

/** How large one merged stream response may grow: well under the message size limit. */
const MERGED_RESPONSE_BYTES = 1024 * 1024;

export const STORE_FILE_NAME = "tasks.sqlite";
const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

export async function createApp(config: Config, logger: CoreLogger, overrides: AppOverrides = {}): Promise<A2AApp> {
  const agent = overrides.agent ?? (await loadAgent(config.agentModule ?? undefined));
  const resume = config.streaming && config.streamResumeRetentionMs !== null ? { retentionMs: config.streamResumeRetentionMs, maxEvents: config.streamResumeEvents, maxBytes: config.streamResumeBytes } : undefined;
  const card = buildAgentCard(
    {
      publicGrpcAddress: config.publicGrpcAddress,
      name: config.agentName ?? undefined,
      description: config.agentDescription ?? undefined,
      streaming: config.streaming,
      pushNotifications: false,
    },
    resume === undefined ? agent.card : { ...agent.card, extensions: [...(agent.card?.extensions ?? []), streamResumeDeclaration(resume.retentionMs, config.streamHeartbeatMs)] },
  );
  const extendedCard = buildExtendedAgentCard(card, agent.card);
  const { repository, pageTokenSecret } = overrides.repository
    ? { repository: overrides.repository, pageTokenSecret: randomBytes(32) }
    : await openRepository(config, resume);
  const hub = new EventHub((error, event) => logger.warn({ err: error, task_id: event.taskId }, "a task event listener failed and was removed"));
  const service = new TaskService({
    repository,
    hub,
    agent,
    logger,
    pageTokens: new PageTokenCodec(pageTokenSecret),
    acceptedInputMediaTypes: agent.card?.acceptedInputMediaTypes,
  });
  const recovered = await service.recoverInterruptedWork();
  if (recovered.failed + recovered.resumed > 0) logger.info(recovered, "settled tasks left running by the previous process");
  const sweeper = config.retentionMs === null ? undefined : new RetentionSweeper(repository, config.retentionMs, logger);
  sweeper?.start();
  let cardServer: AgentCardServer | undefined;
  if (config.cardListen !== null) {
    const { host, port } = splitHostPort(config.cardListen);
    cardServer = await startAgentCardServer({ host, port, card });
  }
  const handlers = createA2AHandlers({
    service,
    card,
    extendedCard,
    allowMissingVersion: config.allowMissingVersion,
    streamLimits: {
      streamBytes: config.streamBacklogBytes,
      streamEntries: config.streamBufferEvents,
      entryBytes: Math.min(MERGED_RESPONSE_BYTES, Math.floor(config.maxMessageBytes / 2)),
      shared: new BacklogBudget(config.streamsBacklogBytes),
    },
    // Only with a store that keeps the events: a repository given by the caller may not.
    streamResume: resume !== undefined && repository.eventLog !== undefined ? { heartbeatMs: config.streamHeartbeatMs } : undefined,
  });
  return {
    handlers,
    card,
    service,
    hub,
    repository,
    cardPort: cardServer?.port,
    async close(graceMs) {
      sweeper?.stop();
      await service.shutdown(graceMs);
      await cardServer?.close();
      await repository.close();
    },
  };
}

/**
 * What observes every call besides the RPC log (always on, made by the server from its logger):
 * metrics and tracing go here (src/protocol/call-observer.ts says what an observer can do).
 * main.ts hands them to startServer; a capability switched off adds nothing.
 */
export function createCallObservers(_config: Config): Array<CallObserver<any>> {
  return [];
}

async function openRepository(config: Config, eventLog: EventLogOptions | undefined): Promise<{ repository: TaskRepository; pageTokenSecret: Buffer }> {
  if (config.store === "memory") return { repository: new MemoryTaskRepository({ eventLog }), pageTokenSecret: randomBytes(32) };
  const repository = openSqliteTaskRepository({ file: join(config.dataDir, STORE_FILE_NAME), durability: config.storeDurability, eventLog });
  // Page tokens outlive a restart with the store they point into, so their key is kept with it.
  let secret = await repository.getMeta(PAGE_TOKEN_SECRET_KEY);
  if (secret === undefined) {
    secret = randomBytes(32).toString("base64");
    await repository.setMeta(PAGE_TOKEN_SECRET_KEY, secret);
  }
  return { repository, pageTokenSecret: Buffer.from(secret, "base64") };
}

function splitHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(colon + 1)) };
}
