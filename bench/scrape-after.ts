// Diagnosis (metrics5): server CPU per call in the chunks after a scrape, after a 404 on the metrics
// listener, and after nothing, on one metrics-on server. Run: node --import tsx bench/scrape-after.ts [store]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { getClosing, getKeptAlive } from "./lib/http-get.js";
import { loadClient, runLoad } from "./lib/load.js";
import { procCpuMicros, waitUntilServing } from "./lib/measure.js";
import { freePort, startServerProcess } from "./lib/server-process.js";
import { median } from "./lib/stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const store = process.argv[2] ?? "sqlite";
const request = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "m1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);
const metricsPort = await freePort();
const server = await startServerProcess({
  name: "metrics",
  script: join(ROOT, "dist/src/main.js"),
  cwd: ROOT,
  nodeFlags: (process.env.NODE_FLAGS ?? "").split(" ").filter(Boolean),
  env: (port) => ({
    A2A_LISTEN: `127.0.0.1:${port}`,
    A2A_LOG_LEVEL: "warn",
    A2A_LOG_FORMAT: "json",
    A2A_STORE: store,
    ...(store === "sqlite" ? { A2A_DATA_DIR: mkdtempSync(join(tmpdir(), "a2a-scrape-after-")) } : {}),
    A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
    A2A_CARD_LISTEN: "off",
    A2A_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
    OTEL_TRACES_EXPORTER: "none",
  }),
});
const cpu = () => procCpuMicros(server.pid) ?? Number.NaN;
const lc = loadClient(server.address, { "a2a-version": "1.0" });
await waitUntilServing(server, () => lc.call(SEND, request), 60_000);
const load = (calls: number) => runLoad(lc, { path: SEND, request, inFlight: 32, calls });
await load(6000);
const CHUNKS = Number(process.env.CHUNKS ?? 10),
  CALLS = Number(process.env.CALLS ?? 1000),
  CYCLES = Number(process.env.CYCLES ?? 8);
/** One request to the metrics listener: "scrape" or "404" over a kept-alive connection (fetch), "…-close" on a connection closed after it. */
async function request1(action: string): Promise<void> {
  const url = `http://127.0.0.1:${metricsPort}${action.startsWith("scrape") ? "/metrics" : "/nothing"}`;
  await (action.endsWith("-close") ? getClosing(url) : getKeptAlive(url));
}
const actions = (process.env.ACTIONS ?? "none,scrape,404").split(",");
const per: Record<string, number[][]> = Object.fromEntries(actions.map((a) => [a, Array.from({ length: CHUNKS }, () => [])]));
for (let c = 0; c < CYCLES * actions.length; c++) {
  const action = actions[c % actions.length]!;
  if (action !== "none") await request1(action);
  await new Promise((r) => setTimeout(r, 100));
  for (let k = 0; k < CHUNKS; k++) {
    const before = cpu();
    await load(CALLS);
    per[action]![k]!.push((cpu() - before) / CALLS);
  }
}
for (const a of actions) console.log(a.padEnd(7), per[a]!.map((xs) => median(xs).toFixed(1)).join(" "), " all:", median(per[a]!.flat()).toFixed(1));

await server.stop();
process.exit(0);
