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
import type { A2AServiceHandlers } from "./protocol/grpc-adapter.js";
import { createTelemetry, METRICS_PATH, startMetricsServer, type MetricsServer, type ServiceMetrics, type Telemetry, type TelemetryOptions } from "./observability/index.js";
import { MemoryTaskRepository } from "./storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "./storage/sqlite/sqlite-task-repository.js";
import { BacklogBudget, openStreamCount } from "./streams/index.js";

/** Everything the gRPC server needs to serve A2A, built from the configuration. */
export interface A2AApp {
  readonly handlers: Partial<A2AServiceHandlers>;
  readonly card: AgentCard;
  readonly service: TaskService;
  readonly hub: EventHub;
  readonly repository: TaskRepository;
  /** Port of the HTTP agent card listener, when it runs. */
  readonly cardPort: number | undefined;
  /** The Prometheus metrics, unless off (A2A_METRICS_LISTEN). */
  readonly metrics: ServiceMetrics | undefined;
  /** Port of the HTTP listener serving /metrics: the card's, or its own. */
  readonly metricsPort: number | undefined;
  /** Stops agents (failing or keeping their tasks by the restart rule), the card listener and the store. */
  close(graceMs: number): Promise<void>;
}

export interface AppOverrides {
  /** An agent object instead of config.agentModule (tests, embedding). */
  readonly agent?: Agent;
  readonly repository?: TaskRepository;
  /** Metrics and tracing made for the server beforehand (createAppTelemetry); by default the app makes its own metrics, without call observers. */
  readonly telemetry?: Telemetry;
}

/** How large one merged stream response may grow: well under the message size limit. */
const MERGED_RESPONSE_BYTES = 1024 * 1024;

export const STORE_FILE_NAME = "tasks.sqlite";
const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

export async function createApp(config: Config, logger: CoreLogger, overrides: AppOverrides = {}): Promise<A2AApp> {
  const agent = overrides.agent ?? (await loadAgent(config.agentModule ?? undefined));
  const card = buildAgentCard(
    {
      publicGrpcAddress: config.publicGrpcAddress,
      name: config.agentName ?? undefined,
      description: config.agentDescription ?? undefined,
      streaming: config.streaming,
      pushNotifications: false,
    },
    agent.card,
  );
  const extendedCard = buildExtendedAgentCard(card, agent.card);
  const { repository, pageTokenSecret } = overrides.repository
    ? { repository: overrides.repository, pageTokenSecret: randomBytes(32) }
    : await openRepository(config);
  // Subscribed before anything runs, so that the tasks recovered at start-up are counted too.
  const telemetry = overrides.telemetry ?? (await createAppTelemetry(config, {}));
  const { metrics } = telemetry;
  if (telemetry.tracing !== undefined) telemetry.tracing.agentName = card.name;
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
    const routes = metrics !== undefined && config.metricsListen === "card" ? new Map([[METRICS_PATH, metrics.route]]) : undefined;
    cardServer = await startAgentCardServer({ host, port, card, routes });
  }
  let metricsServer: MetricsServer | undefined;
  if (metrics !== undefined && config.metricsListen !== null && config.metricsListen !== "card") {
    metricsServer = await startMetricsServer({ ...splitHostPort(config.metricsListen), registry: metrics.metrics.registry });
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
  });
  return {
    handlers,
    card,
    service,
    hub,
    repository,
    cardPort: cardServer?.port,
    metrics,
    metricsPort: metricsServer?.port ?? (metrics !== undefined ? cardServer?.port : undefined),
    async close(graceMs) {
      sweeper?.stop();
      await service.shutdown(graceMs);
      await cardServer?.close();
      await metricsServer?.close();
      await telemetry.close();
      await repository.close();
    },
  };
}

/**
 * Metrics and tracing, made before the gRPC server: their call observers go to startServer (after
 * the RPC log, which the server makes itself), then the telemetry to createApp. Tracing follows
 * the OTEL_* variables in `env` (off unless OTEL_TRACES_EXPORTER names an exporter).
 */
export function createAppTelemetry(config: Config, env: NodeJS.ProcessEnv, extra: Partial<TelemetryOptions> = {}): Promise<Telemetry> {
  return createTelemetry({ metrics: servesMetrics(config), metricsSources: { openStreams: openStreamCount }, env, ...extra });
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

/** Metrics are collected only where they can be scraped: on their own listener, or on the card's when it runs. */
function servesMetrics(config: Config): boolean {
  return config.metricsListen !== null && (config.metricsListen !== "card" || config.cardListen !== null);
}

function splitHostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(colon + 1)) };
}
