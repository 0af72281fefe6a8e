#!/usr/bin/env node
/**
 * The service's entry point: configuration, the A2A app, the gRPC server, signals.
 * Exit codes: 0 after a clean (or forced) shutdown, 2 for invalid configuration or a listen
 * address that cannot be bound (in use, not allowed, not on this machine), 1 for
 * anything else that stops the service.
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import { createApp, createAppTelemetry, type A2AApp } from "./app.js";
import { runKeygen, runKeysCommand } from "./auth/index.js";
import { ConfigError, describeConfigForTerminal, loadConfig, wantsHelp, type Config } from "./config/index.js";
import { SETTINGS } from "./config/settings.js";
import { describeListenFailure, describeSharedAddress, type Listener } from "./listen-failure.js";
import { createLogger } from "./observability/logger.js";
import { a2aStatusMapper } from "./protocol/status-mapper.js";
import { startServer, type RunningServer } from "./protocol/server.js";
import { runPushCommand } from "./commands/push-command.js";
import { packageVersion } from "./version.js";

/** Time the shutdown hooks get beyond the grace period before the process gives up on them. */
const HOOK_MARGIN_MS = 5000;
/**
 * After the agents' grace: how long the calls still open may take to send their last replies
 * (a blocking SendMessage answering the FAILED task) before the server closes them.
 * scripts/check-manifests.mjs counts it (FINAL_REPLIES_MS) in the termination grace.
 */
const FINAL_REPLIES_MS = 1000;

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes("--version") || argv.includes("-V")) {
    process.stdout.write(`a2a-grpc-server ${packageVersion()}\n`);
    return;
  }
  if (argv[0] === "keygen") {
    process.exitCode = runKeygen(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
    return;
  }
  if (argv[0] === "keys") {
    process.exitCode = runKeysCommand(
      argv.slice(1),
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
    return;
  }
  if (argv[0] === "push") {
    process.exitCode = runPushCommand(
      argv.slice(1),
      process.env,
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
    return;
  }
  if (wantsHelp(argv)) {
    process.stdout.write(
      `Usage: a2a-grpc-server [--flag=value ...]\n       a2a-grpc-server keygen --principal=NAME [--tenants=a,b] [--scopes=x,y]\n       a2a-grpc-server keys check FILE\n       a2a-grpc-server push public-key | push tenant-secret --tenant=NAME\n\n${describeConfigForTerminal()}\n`,
    );
    return;
  }
  let config: Config;
  try {
    config = loadConfig({ argv, env: process.env, stdoutIsTTY: Boolean(process.stdout.isTTY) });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }

  const shared = describeSharedAddress([{ setting: SETTINGS.listen, address: config.listen }, ...httpListeners(config)]);
  if (shared !== undefined) {
    process.stderr.write(`${shared}\n`);
    process.exit(2);
  }

  const logger = await createLogger({ level: config.logLevel, format: config.logFormat });
  process.on("uncaughtException", (err) => fatal(logger, err, "uncaught exception"));
  process.on("unhandledRejection", (err) => fatal(logger, err, "unhandled promise rejection"));

  // Metrics and tracing first: they observe the server's calls from the first one.
  const telemetry = await createAppTelemetry(config, process.env);

  // Bind first (health NOT_SERVING, A2A answers UNIMPLEMENTED), so that the agent card can
  // advertise the port really bound when the listen address asked for port 0.
  let server: RunningServer;
  // grpc-js prints its own line for a failed bind; the operator gets ours (below) instead.
  grpc.setLogger({ error: (...parts: unknown[]) => logger.debug({ grpc: parts.join(" ") }, "grpc-js") });
  try {
    server = await startServer({
      listen: config.listen,
      tls: config.tls,
      maxMessageBytes: config.maxMessageBytes,
      keepaliveTimeMs: config.keepaliveTimeMs,
      keepaliveTimeoutMs: config.keepaliveTimeoutMs,
      logger,
      observers: telemetry.observers,
      guardedServices: config.auth.guardedServices,
      serveV03: config.v03 !== null,
    });
  } catch (err) {
    exitIfListenFailed(err, [{ setting: SETTINGS.listen, address: config.listen }]);
    fatal(logger, err, `could not listen on ${config.listen}`);
  } finally {
    grpc.setLogger(console);
  }
  let app: A2AApp;
  try {
    const publicGrpcAddress = config.publicGrpcAddress === config.listen ? server.address : config.publicGrpcAddress;
    app = await createApp({ ...config, publicGrpcAddress }, logger, { telemetry, observers: server.observers });
  } catch (err) {
    const failed = describeListenFailure(err, httpListeners(config));
    if (failed === undefined) logger.fatal({ err }, `could not start: ${err instanceof Error ? err.message : String(err)}`);
    await server.shutdown(0);
    if (failed !== undefined) process.stderr.write(`${failed}\n`);
    process.exit(failed === undefined ? 1 : 2);
  }
  const started = app;
  // Runs once the server has stopped: stop agents, the card listener and the store.
  let shutdownDeadline = 0;
  server.onShutdown(() => started.close(Math.max(0, shutdownDeadline - Date.now())));
  if (app.serviceGuard !== undefined) server.guardServices(app.serviceGuard);
  server.useHandlers(app.handlers, a2aStatusMapper);

  logger.info(
    {
      address: server.address,
      tls: config.tls === null ? "off" : config.tls.clientCa ? "mtls" : "on",
      card: app.cardPort === undefined ? "off" : app.cardPort,
      jsonrpc: app.card.supportedInterfaces.find((i) => i.protocolBinding === "JSONRPC")?.url ?? "off",
      metrics: app.metricsPort === undefined ? "off" : app.metricsPort,
      tracing: telemetry.tracing === undefined ? "off" : "on",
      store: config.store,
      version: packageVersion(),
    },
    `listening on ${server.address}`,
  );

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    logger.info({ signal, grace_ms: config.shutdownGraceMs }, "shutting down");
    shutdownDeadline = Date.now() + config.shutdownGraceMs;
    setTimeout(
      () => {
        logger.error("shutdown did not finish in time; exiting");
        process.exit(1);
      },
      config.shutdownGraceMs + FINAL_REPLIES_MS + HOOK_MARGIN_MS,
    ).unref();
    // No new calls; the runs in flight get the grace, and the streams watching them hear how their tasks end
    // (FAILED if still running, issue 33 finding 15) before the server closes what is left.
    server.stopAccepting();
    started
      .stopRuns(config.shutdownGraceMs)
      .then(() => server.shutdown(FINAL_REPLIES_MS))
      .then(
        () => {
          logger.info("stopped");
          process.exit(0);
        },
        (err: unknown) => fatal(logger, err, "shutdown failed"),
      );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** A listener that could not bind ends the process with one line naming its setting, exit 2. */
function exitIfListenFailed(err: unknown, listeners: readonly Listener[]): void {
  const failed = describeListenFailure(err, listeners);
  if (failed === undefined) return;
  process.stderr.write(`${failed}\n`);
  process.exit(2);
}

/** The HTTP listeners createApp binds, in its order: the agent card's, then the metrics' own. */
function httpListeners(config: Config): Listener[] {
  const listeners: Listener[] = [];
  if (config.cardListen !== null) listeners.push({ setting: SETTINGS.cardListen, address: config.cardListen });
  if (config.metricsListen !== null && config.metricsListen !== "card") listeners.push({ setting: SETTINGS.metricsListen, address: config.metricsListen });
  return listeners;
}

function fatal(logger: Logger, err: unknown, msg: string): never {
  logger.fatal({ err }, msg);
  process.exit(1);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
