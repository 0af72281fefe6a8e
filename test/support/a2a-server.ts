import * as grpc from "@grpc/grpc-js";
import { A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { createApp, createAppTelemetry, type A2AApp } from "../../src/app.js";
import type { TelemetryOptions } from "../../src/observability/index.js";
import { loadConfig, type Config } from "../../src/config/index.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import type { TaskRepository } from "../../src/lifecycle/ports/task-repository.js";
import { startServer, type RunningServer } from "../../src/protocol/server.js";
import { a2aStatusMapper } from "../../src/protocol/status-mapper.js";
import { captureLogger } from "../foundation/helpers.js";

export interface A2ATestServer {
  readonly server: RunningServer;
  readonly app: A2AApp;
  /** The independent ts-proto client. */
  readonly client: A2AServiceClient;
  readonly target: string;
  readonly lines: Array<Record<string, unknown>>;
  /** Metadata every A2A call needs: a2a-version 1.0 (plus any extra entries). */
  metadata(extra?: Record<string, string>): grpc.Metadata;
  close(): Promise<void>;
}

export interface A2ATestServerOptions {
  readonly agent?: Agent;
  readonly repository?: TaskRepository;
  /** Settings as environment variables (A2A_*), on top of: memory store, card listener off, port 0. */
  readonly env?: Record<string, string>;
  /**
   * Advertise the real bound address (127.0.0.1:<port>) as the card's GRPC interface url,
   * so clients that discover the server through its card (A2A_CARD_LISTEN) dial this server.
   * Wins over an A2A_PUBLIC_GRPC_ADDRESS in `env`.
   */
  readonly advertiseBoundAddress?: boolean;
  /** How webhook host names resolve (push tests: never the real DNS). */
  readonly pushResolver?: import("../../src/push/index.js").Resolver;
  /** Tracing for the test (OTEL_* variables, or span processors); by default off. Metrics follow the A2A_* settings. */
  readonly telemetry?: Pick<TelemetryOptions, "env" | "spanProcessors">;
  /** Serve A2A v0.3's a2a.v1.A2AService too, as main.ts does unless A2A_V03=off (off here by default). */
  readonly serveV03?: boolean;
}

/** The whole service (app + gRPC server) on 127.0.0.1:0, as main.ts assembles it. */
export async function startA2AServer(options: A2ATestServerOptions = {}): Promise<A2ATestServer> {
  const { logger, lines } = captureLogger("info");
  const env = { A2A_LISTEN: "127.0.0.1:0", A2A_STORE: "memory", A2A_CARD_LISTEN: "off", A2A_PUBLIC_GRPC_ADDRESS: "127.0.0.1:50051", ...options.env };
  let config: Config = loadConfig({ argv: [], env });
  const telemetry = await createAppTelemetry(config, options.telemetry?.env ?? {}, { spanProcessors: options.telemetry?.spanProcessors });
  const server = await startServer({
    listen: config.listen,
    logger,
    observers: telemetry.observers,
    maxMessageBytes: config.maxMessageBytes,
    keepaliveTimeMs: config.keepaliveTimeMs,
    keepaliveTimeoutMs: config.keepaliveTimeoutMs,
    guardedServices: config.auth.guardedServices,
    serveV03: options.serveV03 === true && config.v03 !== null,
  });
  // The port is known only once the server is bound, so the card's address is settled afterwards.
  if (options.advertiseBoundAddress) config = loadConfig({ argv: [], env: { ...env, A2A_PUBLIC_GRPC_ADDRESS: `127.0.0.1:${server.port}` } });
  const app = await createApp(config, logger, {
    agent: options.agent,
    repository: options.repository,
    pushResolver: options.pushResolver,
    telemetry,
    observers: server.observers,
  });
  server.onShutdown(() => app.close(0));
  if (app.serviceGuard !== undefined) server.guardServices(app.serviceGuard);
  server.useHandlers(app.handlers, a2aStatusMapper);
  const target = `127.0.0.1:${server.port}`;
  const client = new A2AServiceClient(target, grpc.credentials.createInsecure());
  return {
    server,
    app,
    client,
    target,
    lines,
    metadata(extra = {}) {
      const md = new grpc.Metadata();
      md.set("a2a-version", "1.0");
      for (const [k, v] of Object.entries(extra)) md.set(k, v);
      return md;
    },
    async close() {
      client.close();
      await server.shutdown(0);
    },
  };
}
