#!/usr/bin/env node
/**
 * Container health probe: calls grpc.health.v1.Health/Check on the configured listen
 * address (same environment as the server) with a 3 s deadline. Exit 0 when SERVING,
 * 1 otherwise. A wildcard listen host is probed on loopback. With TLS the probe does not
 * verify the server's certificate (it only talks to itself); with mTLS it presents the
 * server's own certificate, so that certificate must be acceptable to the client CA.
 */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { Health, HealthCheckRequestSchema, HealthCheckResponse_ServingStatus, type HealthCheckResponse } from "../gen/es/grpc/health/v1/health_pb.js";
import { loadConfig, type Config } from "./config/index.js";
import { formatHostPort, parseHostPort } from "./settings/parse-values.js";
import { createServiceDefinition } from "./protocol/grpc-adapter.js";

const DEADLINE_MS = 3000;

/** Where to dial: the listen address, with a wildcard host replaced by loopback. */
export function probeTarget(listen: string): string {
  const { host, port } = parseHostPort(listen);
  const probeHost = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host;
  return formatHostPort({ host: probeHost, port });
}

function probeCredentials(tls: Config["tls"]): grpc.ChannelCredentials {
  if (tls === null) return grpc.credentials.createInsecure();
  const mtls = tls.clientCa !== null;
  return grpc.credentials.createSsl(null, mtls ? tls.key : null, mtls ? tls.cert : null, { rejectUnauthorized: false });
}

type CheckMethod = (request: unknown, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, response?: HealthCheckResponse) => void) => void;

async function probe(): Promise<string> {
  const config = loadConfig({ argv: process.argv.slice(2), env: process.env, probe: true });
  const HealthClient = grpc.makeGenericClientConstructor(createServiceDefinition(Health), "Health");
  const client = new HealthClient(probeTarget(config.listen), probeCredentials(config.tls));
  try {
    const check = (client as unknown as { Check: CheckMethod }).Check.bind(client);
    const response = await new Promise<HealthCheckResponse>((resolve, reject) =>
      check(create(HealthCheckRequestSchema, { service: "" }), { deadline: Date.now() + DEADLINE_MS }, (error, response) =>
        error ? reject(error) : resolve(response!),
      ),
    );
    return HealthCheckResponse_ServingStatus[response.status] ?? String(response.status);
  } finally {
    client.close();
  }
}

probe().then(
  (status) => {
    process.stdout.write(`${status}\n`);
    process.exit(status === "SERVING" ? 0 : 1);
  },
  (err: unknown) => {
    process.stderr.write(`health check failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
