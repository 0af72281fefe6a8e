// What one HTTP/1 request on a warm server's metrics listener does to V8's compiled gRPC path
// (issue 16): a metrics-on server (memory store) run with --trace-opt --trace-deopt, warmed up with
// blocking SendMessage in phases of 250 calls, then one GET of a missing path on its metrics
// listener (REQUEST_PATH=/metrics: a scrape; STORE=sqlite: that store), then more phases. Prints CPU per call before and after, and how many optimized
// functions V8 threw away around the request and after it. Run: node --import tsx bench/http-after.ts
// (FLAGS= other node flags; LOG= where the trace goes, default /tmp/http-after-trace.log).
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadClient, runLoad } from "./lib/load.js";
import { procCpuMicros, waitUntilServing } from "./lib/measure.js";
import { freePort, startServerProcess } from "./lib/server-process.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const LOG = process.env.LOG ?? "/tmp/http-after-trace.log";
writeFileSync(LOG, "");
const request = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "m1", role: Role.USER, parts: [{ content: { case: "text", value: "hi" } }] }),
    }),
  ),
);
const store = process.env.STORE ?? "memory";
const path = process.env.REQUEST_PATH ?? "/nothing";
const metricsPort = await freePort();
const server = await startServerProcess({
  name: "m",
  script: join(ROOT, "dist/src/main.js"),
  cwd: ROOT,
  nodeFlags: (process.env.FLAGS ?? "--trace-opt --trace-deopt").split(" ").filter(Boolean),
  captureStdout: true,
  onStdout: (c) => appendFileSync(LOG, c),
  env: (port) => ({
    A2A_LISTEN: `127.0.0.1:${port}`,
    A2A_LOG_LEVEL: "warn",
    A2A_STORE: store,
    ...(store === "sqlite" ? { A2A_DATA_DIR: mkdtempSync(join(tmpdir(), "a2a-http-after-")) } : {}),
    A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
    A2A_CARD_LISTEN: "off",
    A2A_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
    OTEL_TRACES_EXPORTER: "none",
  }),
});
const lc = loadClient(server.address, { "a2a-version": "1.0" });
await waitUntilServing(server, () => lc.call(SEND, request), 60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function phases(label: string, n: number) {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const b = procCpuMicros(server.pid)!;
    await runLoad(lc, { path: SEND, request, inFlight: 32, calls: 250 });
    await sleep(150);
    xs.push((procCpuMicros(server.pid)! - b) / 250);
  }
  xs.sort((a, b) => a - b);
  console.log(label, "median µs/call", xs[n >> 1]!.toFixed(1));
}
/** One request on the metrics listener, between two markers in the trace. */
async function markedRequest(name: string): Promise<void> {
  appendFileSync(LOG, `=== ${name}\n`);
  await (await fetch(`http://127.0.0.1:${metricsPort}${path}`)).text();
  await sleep(300);
  appendFileSync(LOG, `=== after ${name}\n`);
}
await phases("warm-up", 60);
await phases("before", 40);
await markedRequest("request 1");
await phases("after 1", 40);
await phases("after 2", 40);
// A second request, to tell a one-time change from one each request makes.
await markedRequest("request 2");
await phases("after a second request", 40);
appendFileSync(LOG, "=== stop\n");
await sleep(300);
const trace = readFileSync(LOG, "utf8");
const between = (from: string, to: string) => trace.slice(trace.indexOf(`=== ${from}\n`), trace.indexOf(`=== ${to}\n`));
const thrownAway = (text: string) => text.split("\n").filter((l) => l.startsWith("[bailout") || l.startsWith("[marking dependent code")).length;
console.log(
  `optimized functions thrown away: around request 1 ${thrownAway(between("request 1", "after request 1"))}, after it ${thrownAway(between("after request 1", "request 2"))}; around request 2 ${thrownAway(between("request 2", "after request 2"))}, after it ${thrownAway(between("after request 2", "stop"))}`,
);
await server.stop();
process.exit(0);
