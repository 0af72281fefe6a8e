import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { AgentCard } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { buildAgentCard, buildExtendedAgentCard } from "./agents/agent-card.js";
import { loadAgent } from "./agents/agent-loader.js";
import { cardSecurity, createAuth, legacyOwnerPrefix, useMigrationOwnerPrefix } from "./auth/index.js";
import { AUTH_FAILURE_BURST_SECONDS, ConcurrencyLimiter, RateLimiter, RunLimiter, TaskQuota } from "./limits/index.js";
import type { Config } from "./config/config.js";
import { EventHub, type TaskEventHub } from "./events/event-hub.js";
import type { TaskEvent } from "./events/task-event.js";
import {
  type Agent,
  type CoreLogger,
  PageTokenCodec,
  RetentionSweeper,
  type RunLeases,
  type TaskRepository,
  TaskService,
  type TaskSizeLimits,
  type EventLogOptions,
} from "./lifecycle/index.js";
import { PushConfigService } from "./push/push-configs.js";
import { measureTask } from "./codec/list-response-encoder.js";
import { encodedArtifactSize, encodedTaskSize } from "./codec/task-encoder.js";
import { createA2AHandlers } from "./service/a2a-handlers.js";
import { DEFAULT_VALIDATION_LIMITS } from "./service/request-validation.js";
import { cardBytes, startAgentCardServer, type AgentCardServer } from "./protocol/agent-card-http.js";
import { servedCardOf } from "./http/card-response.js";
import { v03CardInterfaces } from "./v03/card/index.js";
import { startBindingsListener } from "./http-bindings.js";
import type { CallObservers } from "./service/call-observer.js";
import type { A2AServiceHandlers } from "./protocol/grpc-adapter.js";
import type { ServiceGuard } from "./protocol/service-guard.js";
import {
  createTelemetry,
  currentTraceContext,
  METRICS_PATH,
  startMetricsServer,
  type MetricsServer,
  type ServiceMetrics,
  type Telemetry,
  type TelemetryOptions,
} from "./observability/index.js";
import { MemoryTaskRepository } from "./storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "./storage/sqlite/sqlite-task-repository.js";
import { createPushDelivery, createWebhookSigner, pushSignatureDeclaration, type PushDelivery, type Resolver } from "./push/index.js";
import { BacklogBudget, openStreamCount, streamResumeDeclaration } from "./streams/index.js";
import type { PushCapableRepository } from "./push/ports/push-storage.js";

/** Everything the gRPC server needs to serve A2A, built from the configuration. */
export interface A2AApp {
  readonly handlers: Partial<A2AServiceHandlers>;
  readonly card: AgentCard;
  readonly service: TaskService;
  readonly hub: TaskEventHub;
  readonly repository: TaskRepository;
  /** Webhook delivery, when push notifications are on. */
  readonly push: PushDelivery | undefined;
  /** Port of the HTTP agent card listener, when it runs. */
  readonly cardPort: number | undefined;
  /** The Prometheus metrics, unless off (A2A_METRICS_LISTEN). */
  readonly metrics: ServiceMetrics | undefined;
  /** Port of the HTTP listener serving /metrics: the card's, or its own. */
  readonly metricsPort: number | undefined;
  /** Proves who calls health or reflection when A2A_AUTH_OPEN_SERVICES closes them (RunningServer.guardServices); undefined with no authentication. */
  readonly serviceGuard: ServiceGuard | undefined;
  /**
   * The first step of a shutdown (issue 33 finding 15): no new runs, the runs in flight get up to
   * `graceMs` to finish, then those still going are stopped and their tasks FAILED (or, for an
   * agent that resumes, left to another replica or the next start). See TaskService.shutdown.
   */
  stopRuns(graceMs: number): Promise<void>;
  /** Stops agents (as stopRuns, if it has not run), the card listener and the store. */
  close(graceMs: number): Promise<void>;
}

export interface AppOverrides {
  /** An agent object instead of config.agentModule (tests, embedding). */
  readonly agent?: Agent;
  /** A store instead of the configured one; its `push`, when present, keeps the push configs and outbox. */
  readonly repository?: PushCapableRepository;
  /** How webhook host names are resolved (tests inject one; DNS otherwise). */
  readonly pushResolver?: Resolver;
  /** Metrics and tracing made for the server beforehand (createAppTelemetry); by default the app makes its own metrics, without call observers. */
  readonly telemetry?: Telemetry;
  /** The gRPC server's call seam (RunningServer.observers), for the HTTP bindings' calls; by default none. */
  readonly observers?: CallObservers;
}

/** How large one merged stream response may grow: well under the message size limit. */
const MERGED_RESPONSE_BYTES = 1024 * 1024;

export const STORE_FILE_NAME = "tasks.sqlite";
const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

export async function createApp(config: Config, logger: CoreLogger, overrides: AppOverrides = {}): Promise<A2AApp> {
  const agent = overrides.agent ?? (await loadAgent(config.agentModule ?? undefined));
  const resume =
    config.streaming && config.streamResumeRetentionMs !== null
      ? { retentionMs: config.streamResumeRetentionMs, maxEvents: config.streamResumeEvents, maxBytes: config.streamResumeBytes }
      : undefined;
  const onListenerError = (error: unknown, event: TaskEvent) =>
    logger.warn({ err: error, task_id: event.taskId }, "a task event listener failed and was removed");
  // Owners stored before they named their scheme are migrated to the one scheme configured now.
  useMigrationOwnerPrefix(legacyOwnerPrefix(config.auth));
  const store: OpenedStore = overrides.repository
    ? { repository: overrides.repository, pageTokenSecret: randomBytes(32), close: () => overrides.repository!.close() }
    : await openStore(config, logger, onListenerError, resume);
  const { repository, pageTokenSecret, leases } = store;
  const pushStore = config.pushNotifications ? repository.push : undefined;
  const pushSigner =
    pushStore && createWebhookSigner(config.push, { dataDir: config.dataDir, durable: config.store !== "memory" && overrides.repository === undefined });
  if (pushSigner !== undefined && config.store === "postgres" && config.push.signing === "ed25519" && config.push.signingKeyFile === null)
    logger.warn(
      { data_dir: config.dataDir },
      "push: each replica signs webhooks with the key in its own data directory; give replicas one key (A2A_PUSH_SIGNING_KEY_FILE)",
    );
  // The HTTP bindings' listener binds first: the card names its URL (with the port bound).
  const bindings = await startBindingsListener(config, overrides.observers, (error) => logger.error({ err: error }, "the HTTP listener failed"));
  const card = buildAgentCard(
    {
      publicGrpcAddress: config.publicGrpcAddress,
      jsonRpcUrl: bindings?.jsonRpcUrl,
      v03Interfaces:
        config.v03 === null
          ? undefined
          : v03CardInterfaces({ grpcAddress: config.publicGrpcAddress, httpBase: bindings?.baseUrl, ...config.v03, preferred: config.preferredBinding }),
      name: config.agentName ?? undefined,
      description: config.agentDescription ?? undefined,
      streaming: config.streaming,
      pushNotifications: pushStore !== undefined,
      pushSignature: pushSigner && pushSignatureDeclaration(pushSigner),
      security: cardSecurity(config.auth),
    },
    // Declared only when the store keeps the events (a repository given by the caller may not).
    resume === undefined || repository.eventLog === undefined
      ? agent.card
      : { ...agent.card, extensions: [...(agent.card?.extensions ?? []), streamResumeDeclaration(resume.retentionMs, config.streamHeartbeatMs)] },
  );
  const extendedCard = buildExtendedAgentCard(card, agent.card);
  const pageTokens = new PageTokenCodec(pageTokenSecret);
  const push = pushStore && createPushDelivery({ store: pushStore, settings: config.push, logger, resolver: overrides.pushResolver, signer: pushSigner });
  const pushConfigs = pushStore && new PushConfigService({ repository, store: pushStore, pageTokens, maxPerTask: config.push.maxConfigsPerTask });
  // Subscribed before anything runs, so that the tasks recovered at start-up are counted too.
  const telemetry = overrides.telemetry ?? (await createAppTelemetry(config, {}));
  const { metrics } = telemetry;
  if (telemetry.tracing !== undefined) telemetry.tracing.agentName = card.name;
  // Outbox entries keep the trace context of their write, so the webhook request joins its trace (nothing kept while tracing is off).
  if (telemetry.tracing !== undefined) pushStore?.useTraceContext?.(currentTraceContext);
  if (push !== undefined) metrics?.usePushStats(() => push.service.stats());
  const hub = store.hub ?? new EventHub(onListenerError);
  const service = new TaskService({
    repository,
    hub,
    leases,
    agent,
    logger,
    pageTokens,
    acceptedInputMediaTypes: agent.card?.acceptedInputMediaTypes,
    attachInlinePushConfig: pushConfigs && ((caller, taskId, inline) => pushConfigs.attachInline(caller, taskId, inline)),
    sizes: taskSizeLimits(config.maxMessageBytes),
    runAdmission:
      config.limits.runsPerPrincipal > 0 || config.limits.runsTotal > 0 ? new RunLimiter(config.limits.runsPerPrincipal, config.limits.runsTotal) : undefined,
  });
  const recovered = await service.recoverInterruptedWork();
  if (recovered.failed + recovered.resumed > 0) logger.info(recovered, "settled tasks left running by the previous process");
  await push?.start(); // resumes the deliveries a previous process left pending
  // Replicas: a replica that dies leaves its tasks to whichever replica sees their lease run out first.
  const orphanSweep =
    store.orphanSweepMs === undefined
      ? undefined
      : setInterval(() => {
          service.recoverInterruptedWork().then(
            (settled) => settled.failed + settled.resumed > 0 && logger.info(settled, "settled tasks of a replica that stopped renewing its leases"),
            (error: unknown) => logger.warn({ err: error }, "could not look for tasks left by a stopped replica"),
          );
        }, store.orphanSweepMs);
  orphanSweep?.unref();
  const sweeper = config.retentionMs === null ? undefined : new RetentionSweeper(repository, config.retentionMs, logger);
  sweeper?.start();
  let cardServer: AgentCardServer | undefined;
  if (bindings !== undefined) {
    bindings.serve(servedCardOf(cardBytes(card)), metrics !== undefined && config.metricsListen === "card" ? metrics.document : undefined);
  } else if (config.cardListen !== null) {
    const { host, port } = splitHostPort(config.cardListen);
    const routes = metrics !== undefined && config.metricsListen === "card" ? new Map([[METRICS_PATH, metrics.document]]) : undefined;
    cardServer = await startAgentCardServer({ host, port, card, routes, onError: (error) => logger.error({ err: error }, "the agent card listener failed") });
  }
  let metricsServer: MetricsServer | undefined;
  if (metrics !== undefined && config.metricsListen !== null && config.metricsListen !== "card") {
    metricsServer = await startMetricsServer({
      ...splitHostPort(config.metricsListen),
      registry: metrics.metrics.registry,
      onError: (error) => logger.error({ err: error }, "the metrics listener failed"),
    });
  }
  const auth = createAuth(config.auth);
  // SIGHUP re-reads the API key file; a bad file keeps the keys in force.
  const onHangup = () => {
    try {
      const keys = auth.reloadApiKeys();
      if (keys !== undefined) logger.info({ keys }, "reloaded the API key file");
    } catch (error) {
      // Loud (issue 33 #11): an error line with FILE:LINE, and a2a_auth_key_reload_failures_total.
      metrics?.metrics.authKeyReloadFailures.inc();
      const line = (error as { line?: number }).line;
      logger.error(
        { err: error, file: config.auth.apiKeysFile, line },
        `could not reload the API key file: ${(error as Error).message}; the keys it still lists stay in force (check it with: a2a-grpc-server keys check FILE)`,
      );
    }
  };
  // ...and the JWT public key file: a new key empties the verified-token cache (issue 33 #3).
  const onHangupJwt = () => {
    try {
      if (auth.reloadJwtKey() === true)
        logger.info({ file: config.auth.jwt?.publicKeyFile }, "reloaded the JWT public key file: a new key; tokens are verified again");
    } catch (error) {
      logger.error({ err: error }, `could not reload the JWT public key file: ${(error as Error).message}; the previous key stays in force`);
    }
  };
  if (config.auth.apiKeysFile !== undefined) process.on("SIGHUP", onHangup);
  if (config.auth.jwt?.publicKeyFile !== undefined) process.on("SIGHUP", onHangupJwt);
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
    authFailures:
      limits.authFailuresPerSecond > 0 ? new RateLimiter(limits.authFailuresPerSecond, limits.authFailuresPerSecond * AUTH_FAILURE_BURST_SECONDS) : undefined,
    taskQuota: limits.tasksPerPrincipal > 0 ? new TaskQuota(repository, limits.tasksPerPrincipal) : undefined,
    limits: { ...DEFAULT_VALIDATION_LIMITS, maxStructEntries: limits.structEntries, maxStructDepth: limits.structDepth },
    streams: limits.streamsPerPrincipal > 0 ? new ConcurrencyLimiter(limits.streamsPerPrincipal) : undefined,
    // Only with a store that keeps the events: a repository given by the caller may not.
    streamResume: resume !== undefined && repository.eventLog !== undefined ? { heartbeatMs: config.streamHeartbeatMs } : undefined,
  });
  bindings?.useHandlers(handlers);
  return {
    handlers,
    card,
    service,
    hub,
    repository,
    push,
    cardPort: cardServer?.port ?? bindings?.port,
    metrics,
    metricsPort: metricsServer?.port ?? (metrics !== undefined ? (cardServer?.port ?? bindings?.port) : undefined),
    serviceGuard: auth.callers && ((call, service) => auth.callers!.authenticateService(call, service)),
    stopRuns: (graceMs) => {
      bindings?.stopAccepting();
      return service.shutdown(graceMs);
    },
    async close(graceMs) {
      process.off("SIGHUP", onHangup);
      process.off("SIGHUP", onHangupJwt);
      auth.close();
      sweeper?.stop();
      clearInterval(orphanSweep);
      bindings?.stopAccepting();
      await service.shutdown(graceMs);
      await push?.close(); // pending deliveries stay in the store for the next start
      await cardServer?.close();
      await bindings?.close();
      await metricsServer?.close();
      await telemetry.close();
      await store.close();
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

/** The store the configuration names, with what comes with it (PostgreSQL: the event relay and run leases). */
interface OpenedStore {
  readonly repository: PushCapableRepository;
  readonly pageTokenSecret: Buffer;
  readonly hub?: TaskEventHub;
  readonly leases?: RunLeases;
  /** How often to look for tasks whose replica died; undefined = one process alone. */
  readonly orphanSweepMs?: number;
  close(): Promise<void>;
}

async function openStore(
  config: Config,
  logger: CoreLogger,
  onListenerError: (error: unknown, event: TaskEvent) => void,
  eventLog: EventLogOptions | undefined,
): Promise<OpenedStore> {
  if (config.store === "memory") {
    const repository = new MemoryTaskRepository({ eventLog });
    return { repository, pageTokenSecret: randomBytes(32), close: () => repository.close() };
  }
  if (config.store === "postgres") {
    // Loaded only when used: a server on SQLite or memory never loads the PostgreSQL client.
    const { openPostgresStore } = await import("./storage/postgres/index.js");
    const pg = await openPostgresStore({
      url: config.databaseUrl!,
      poolSize: config.databasePoolSize,
      leaseMs: config.leaseMs,
      logger,
      onListenerError,
      eventLog,
    });
    // Every replica signs page tokens with the same key, so a page token from one works on all.
    const secret = await pg.repository.setMetaOnce(PAGE_TOKEN_SECRET_KEY, randomBytes(32).toString("base64"));
    return {
      repository: pg.repository,
      pageTokenSecret: Buffer.from(secret, "base64"),
      hub: pg.relay,
      leases: pg.leases,
      // Often enough that a task left by a stopped replica is settled soon after its lease ran out.
      orphanSweepMs: Math.max(100, Math.min(2000, Math.floor(config.leaseMs / 2))),
      close: () => pg.close(),
    };
  }
  const repository = openSqliteTaskRepository({
    file: join(config.dataDir, STORE_FILE_NAME),
    durability: config.storeDurability,
    eventLog,
    commitWindowMs: config.storeCommitWindowMs,
  });
  // Page tokens outlive a restart with the store they point into, so their key is kept with it.
  let secret = await repository.getMeta(PAGE_TOKEN_SECRET_KEY);
  if (secret === undefined) {
    secret = randomBytes(32).toString("base64");
    await repository.setMeta(PAGE_TOKEN_SECRET_KEY, secret);
  }
  return { repository, pageTokenSecret: Buffer.from(secret, "base64"), close: () => repository.close() };
}

/** Metrics are collected only where they can be scraped: on their own listener, or on the card's when it runs. */
function servesMetrics(config: Config): boolean {
  return config.metricsListen !== null && (config.metricsListen !== "card" || config.cardListen !== null);
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
  return {
    maxResponseBytes: maxMessageBytes,
    maxTaskBytes: maxMessageBytes - headroom,
    measureTask,
    measurePiece: encodedTaskSize,
    measureArtifact: encodedArtifactSize,
  };
}
