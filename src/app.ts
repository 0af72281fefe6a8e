import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { AgentCard } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { buildAgentCard, buildExtendedAgentCard } from "./agents/agent-card.js";
import { loadAgent } from "./agents/agent-loader.js";
import { cardSecurity, createAuth } from "./auth/index.js";
import { ConcurrencyLimiter, RateLimiter, RunLimiter } from "./limits/index.js";
import type { Config } from "./config/config.js";
import { EventHub } from "./events/event-hub.js";
import type { Agent } from "./lifecycle/agent.js";
import type { CoreLogger } from "./lifecycle/logger.js";
import { PageTokenCodec } from "./lifecycle/page-token.js";
import { PushConfigService } from "./lifecycle/push-configs.js";
import { RetentionSweeper } from "./lifecycle/retention.js";
import type { TaskRepository } from "./lifecycle/task-repository.js";
import { TaskService } from "./lifecycle/task-service.js";
import type { TaskSizeLimits } from "./lifecycle/task-size.js";
import { measureTask } from "./codec/list-response-encoder.js";
import { createA2AHandlers } from "./protocol/a2a-handlers.js";
import { startAgentCardServer, type AgentCardServer } from "./protocol/agent-card-http.js";
import type { CallObserver } from "./protocol/call-observer.js";
import type { A2AServiceHandlers } from "./protocol/grpc-adapter.js";
import { MemoryTaskRepository } from "./storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "./storage/sqlite/sqlite-task-repository.js";
import { createPushDelivery, pushStoreOf, type PushDelivery, type Resolver } from "./push/index.js";
import { BacklogBudget } from "./streams/index.js";

/** Everything the gRPC server needs to serve A2A, built from the configuration. */
export interface A2AApp {
  readonly handlers: Partial<A2AServiceHandlers>;
  readonly card: AgentCard;
  readonly service: TaskService;
  readonly hub: EventHub;
  readonly repository: TaskRepository;
  /** Webhook delivery, when push notifications are on. */
  readonly push: PushDelivery | undefined;
  /** Port of the HTTP agent card listener, when it runs. */
  readonly cardPort: number | undefined;
  /** Stops agents (failing or keeping their tasks by the restart rule), the card listener and the store. */
  close(graceMs: number): Promise<void>;
}

export interface AppOverrides {
  /** An agent object instead of config.agentModule (tests, embedding). */
  readonly agent?: Agent;
  readonly repository?: TaskRepository;
  /** How webhook host names are resolved (tests inject one; DNS otherwise). */
  readonly pushResolver?: Resolver;
}

/** How large one merged stream response may grow: well under the message size limit. */
const MERGED_RESPONSE_BYTES = 1024 * 1024;

export const STORE_FILE_NAME = "tasks.sqlite";
const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

export async function createApp(config: Config, logger: CoreLogger, overrides: AppOverrides = {}): Promise<A2AApp> {
  const agent = overrides.agent ?? (await loadAgent(config.agentModule ?? undefined));
  const { repository, pageTokenSecret } = overrides.repository
    ? { repository: overrides.repository, pageTokenSecret: randomBytes(32) }
    : await openRepository(config);
  const pushStore = config.pushNotifications ? pushStoreOf(repository) : undefined;
  const card = buildAgentCard(
    {
      publicGrpcAddress: config.publicGrpcAddress,
      name: config.agentName ?? undefined,
      description: config.agentDescription ?? undefined,
      streaming: config.streaming,
      pushNotifications: pushStore !== undefined,
      security: cardSecurity(config.auth),
    },
    agent.card,
  );
  const extendedCard = buildExtendedAgentCard(card, agent.card);
  const pageTokens = new PageTokenCodec(pageTokenSecret);
  const push = pushStore && createPushDelivery({ store: pushStore, settings: config.push, logger, resolver: overrides.pushResolver });
  const pushConfigs = pushStore && new PushConfigService({ repository, store: pushStore, pageTokens, maxPerTask: config.push.maxConfigsPerTask });
  const hub = new EventHub((error, event) => logger.warn({ err: error, task_id: event.taskId }, "a task event listener failed and was removed"));
  const service = new TaskService({
    repository,
    hub,
    agent,
    logger,
    pageTokens,
    acceptedInputMediaTypes: agent.card?.acceptedInputMediaTypes,
    attachInlinePushConfig: pushConfigs && ((caller, taskId, inline) => pushConfigs.attachInline(caller, taskId, inline)),
    sizes: taskSizeLimits(config.maxMessageBytes),
    runAdmission: config.limits.runsPerPrincipal > 0 || config.limits.runsTotal > 0 ? new RunLimiter(config.limits.runsPerPrincipal, config.limits.runsTotal) : undefined,
  });
  const recovered = await service.recoverInterruptedWork();
  if (recovered.failed + recovered.resumed > 0) logger.info(recovered, "settled tasks left running by the previous process");
  await push?.start(); // resumes the deliveries a previous process left pending
  const sweeper = config.retentionMs === null ? undefined : new RetentionSweeper(repository, config.retentionMs, logger);
  sweeper?.start();
  let cardServer: AgentCardServer | undefined;
  if (config.cardListen !== null) {
    const { host, port } = splitHostPort(config.cardListen);
    cardServer = await startAgentCardServer({ host, port, card });
  }
  const auth = createAuth(config.auth);
  // SIGHUP re-reads the API key file; a bad file keeps the keys in force.
  const onHangup = () => {
    try {
      const keys = auth.reloadApiKeys();
      if (keys !== undefined) logger.info({ keys }, "reloaded the API key file");
    } catch (error) {
      logger.error({ err: error }, "could not reload the API key file; the previous keys stay in force");
    }
  };
  if (config.auth.apiKeysFile !== undefined) process.on("SIGHUP", onHangup);
  const limits = config.limits;
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
    pushConfigs,
    checkPushUrl: push && ((url) => push.guard.checkUrl(url)),
    auth: auth.callers,
    rate: limits.ratePerSecond > 0 ? new RateLimiter(limits.ratePerSecond, limits.burst) : undefined,
    streams: limits.streamsPerPrincipal > 0 ? new ConcurrencyLimiter(limits.streamsPerPrincipal) : undefined,
  });
  return {
    handlers,
    card,
    service,
    hub,
    repository,
    push,
    cardPort: cardServer?.port,
    async close(graceMs) {
      process.off("SIGHUP", onHangup);
      auth.close();
      sweeper?.stop();
      await service.shutdown(graceMs);
      await push?.close(); // pending deliveries stay in the store for the next start
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

async function openRepository(config: Config): Promise<{ repository: TaskRepository; pageTokenSecret: Buffer }> {
  if (config.store === "memory") return { repository: new MemoryTaskRepository(), pageTokenSecret: randomBytes(32) };
  const repository = openSqliteTaskRepository({ file: join(config.dataDir, STORE_FILE_NAME), durability: config.storeDurability });
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

/**
 * replies stay within the maximum message size, and an agent may grow a task only to that
 * size less 64 KiB (at most a quarter of it for small limits): the headroom holds the reply's own
 * fields and the service's own status writes (cancel, failure), which are never refused.
 */
function taskSizeLimits(maxMessageBytes: number): TaskSizeLimits {
  const headroom = Math.min(64 * 1024, Math.floor(maxMessageBytes / 4));
  return { maxResponseBytes: maxMessageBytes, maxTaskBytes: maxMessageBytes - headroom, measureTask };
}
