import { HealthCheckResponse_ServingStatus } from "../../../gen/es/grpc/health/v1/health_pb.js";
import { A2AClient } from "../a2a-client.js";
import type { Command } from "../command.js";
import { UsageError } from "../exit-codes.js";

const A2A_SERVICE = "lf.a2a.v1.A2AService";

export const healthCommand: Command = {
  name: "health",
  summary: "is the server serving? (grpc.health.v1.Health/Check; exit 1 when not SERVING)",
  help: `Usage: a2a health [SERVICE]

Asks the standard gRPC health service about SERVICE (default ${A2A_SERVICE};
"" for the server as a whole). Prints SERVING, NOT_SERVING, ...; exits 0 only for SERVING.`,
  options: {},
  async run(ctx) {
    const service = ctx.args[0] ?? A2A_SERVICE;
    // The health service is gRPC's: a card's GRPC interface is used even when another comes first.
    const asked = ctx.connection.binding;
    if (asked !== undefined && asked !== "grpc") throw new UsageError(`a2a health asks the gRPC health service: it has no --binding ${asked}`);
    const { client } = await ctx.connect("grpc");
    if (!(client instanceof A2AClient)) throw new UsageError("a2a health needs a gRPC server");
    const status = await client.health(service);
    const name = HealthCheckResponse_ServingStatus[status] ?? String(status);
    if (ctx.out.json) ctx.out.data({ service, status: name });
    else ctx.out.line(`${service || "(server)"}: ${ctx.out.style(status === HealthCheckResponse_ServingStatus.SERVING ? "green" : "red", name)}`);
    return status === HealthCheckResponse_ServingStatus.SERVING ? 0 : 1;
  },
};
