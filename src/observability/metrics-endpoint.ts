import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenHttp } from "../protocol/agent-card-http.js";
import type { Registry } from "prom-client";

export const METRICS_PATH = "/metrics";

/** Answers GET/HEAD /metrics with the registry in the Prometheus text format. */
export function metricsRoute(registry: Registry): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" });
      res.end(`method ${req.method} not allowed; use GET\n`);
      return;
    }
    registry.metrics().then(
      (text) => {
        const body = Buffer.from(text, "utf8");
        res.writeHead(200, { "Content-Type": registry.contentType, "Content-Length": body.length, "Cache-Control": "no-store" });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (error: unknown) => {
        res.writeHead(500, { "Content-Type": "text/plain" });
        res.end(`could not collect the metrics: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
  };
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** A listener of its own for /metrics (A2A_METRICS_LISTEN set to an address): e.g. on a private interface. */
export function startMetricsServer(options: { host: string; port: number; registry: Registry }): Promise<MetricsServer> {
  const route = metricsRoute(options.registry);
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    if (path === METRICS_PATH) return route(req, res);
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end(`not found; the metrics are at ${METRICS_PATH}\n`);
  });
  return listenHttp(server, options.host, options.port);
}
