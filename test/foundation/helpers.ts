import * as grpc from "@grpc/grpc-js";
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { HealthClient } from "../../gen/ts-proto/grpc/health/v1/health.js";
import { A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { REDACTED_PATHS } from "../../src/observability/logger.js";
import { startServer, type RunningServer, type StartServerOptions } from "../../src/protocol/server.js";

/** A pino logger (configured like the service's) whose lines the test can read. */
export function captureLogger(level: pino.LevelWithSilent = "debug"): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n")) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level, base: null, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, sink), lines };
}

export interface TestServer {
  readonly server: RunningServer;
  readonly a2a: A2AServiceClient;
  readonly health: HealthClient;
  readonly lines: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The real server on 127.0.0.1:0 with the independent ts-proto clients pointed at it. */
export async function startTestServer(options: Partial<StartServerOptions> = {}): Promise<TestServer> {
  const { logger, lines } = captureLogger();
  const server = await startServer({ listen: "127.0.0.1:0", logger, ...options });
  const target = `127.0.0.1:${server.port}`;
  const a2a = new A2AServiceClient(target, grpc.credentials.createInsecure());
  const health = new HealthClient(target, grpc.credentials.createInsecure());
  return {
    server,
    a2a,
    health,
    lines,
    async close() {
      a2a.close();
      health.close();
      await server.shutdown(0);
    },
  };
}

/** Calls a ts-proto unary method and settles with its response or its ServiceError. */
export function unary<Req, Res>(
  client: grpc.Client,
  method: (
    request: Req,
    metadata: grpc.Metadata,
    options: Partial<grpc.CallOptions>,
    cb: (e: grpc.ServiceError | null, r: Res) => void,
  ) => grpc.ClientUnaryCall,
  request: Req,
  metadata = new grpc.Metadata(),
  options: Partial<grpc.CallOptions> = {},
): Promise<{ response?: Res; error?: grpc.ServiceError; headers: grpc.Metadata }> {
  return new Promise((resolve) => {
    let headers = new grpc.Metadata();
    const call = method.call(client, request, metadata, options, (error, response) => resolve(error ? { error, headers } : { response, headers }));
    call.on("metadata", (md) => (headers = md));
  });
}

/** Resolves once `predicate` holds, checking on each tick of the event loop (no fixed sleeps). */
export async function until(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The RPC log line of a method, if it has been written. */
export function rpcLine(lines: Array<Record<string, unknown>>, method: string): Record<string, unknown> | undefined {
  return lines.find((l) => l["msg"] === "rpc" && l["method"] === method);
}
