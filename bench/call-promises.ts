/**
 * How many promises one blocking SendMessage makes in the server (the trivial agent, memory store
 * by default), with tracing off and on: while tracing runs, Node's async hooks (AsyncLocalStorage,
 * the context the agent's spans nest in) do work on every promise, so each one on the call's path
 * is tracing cost. A V8 promise hook counts them (it also turns on the extra promise V8 makes per
 * `await` under hooks, as tracing does). Not a timing: the counts are exact.
 *
 *   npm run build && npm run bench -- call-promises [--store=memory|sqlite] [--calls=N]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadClient } from "./lib/load.js";
import { drive, waitUntilServing } from "./lib/measure.js";
import { startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { markdownTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const COUNTER = join(ROOT, "bench", "lib", "count-promises.mjs");

function promisesSoFar(server: ServerProcess): Promise<number> {
  return new Promise((resolve) => {
    server.onMessage((message) => {
      const m = message as { promises?: unknown };
      if (typeof m.promises === "number") resolve(m.promises);
    });
    server.send({ countPromises: true });
  });
}

export async function runCallPromises(args: readonly string[]): Promise<string> {
  const store = args.find((a) => a.startsWith("--store="))?.slice("--store=".length) ?? "memory";
  const calls = Number(args.find((a) => a.startsWith("--calls="))?.slice("--calls=".length) ?? 2000);
  const sink = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => sink.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const request = Buffer.from(
    toBinary(
      SendMessageRequestSchema,
      create(SendMessageRequestSchema, {
        message: create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "2 + 2?" } }] }),
      }),
    ),
  );
  const rows: string[][] = [];
  try {
    for (const traced of [false, true]) {
      const dataDir = store === "sqlite" ? mkdtempSync(join(tmpdir(), "a2a-promises-")) : undefined;
      const server = await startServerProcess({
        name: traced ? "tracing on" : "tracing off",
        script: join(ROOT, "dist/src/main.js"),
        cwd: ROOT,
        nodeFlags: ["--import", COUNTER],
        env: (port) => ({
          A2A_LISTEN: `127.0.0.1:${port}`,
          A2A_LOG_LEVEL: "warn",
          A2A_STORE: store,
          ...(dataDir !== undefined ? { A2A_DATA_DIR: dataDir } : {}),
          A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
          A2A_CARD_LISTEN: "off",
          A2A_METRICS_LISTEN: "off",
          ...(traced
            ? { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "200" }
            : { OTEL_TRACES_EXPORTER: "none" }),
        }),
      });
      const lc = loadClient(server.address, { "a2a-version": "1.0" });
      try {
        await waitUntilServing(server, () => lc.call(SEND, request), 60_000);
        const load = { path: SEND, request, inFlight: 16 };
        await drive(server, lc, load, 500);
        const before = await promisesSoFar(server);
        await drive(server, lc, load, calls);
        const after = await promisesSoFar(server);
        rows.push([server.name, ((after - before) / calls).toFixed(2)]);
      } finally {
        lc.close();
        await server.stop();
        if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    sink.close();
    sink.closeAllConnections();
  }
  return [
    `# Promises per blocking SendMessage in the server (${store} store, ${calls} calls, 16 in flight)`,
    "",
    "Counted with a V8 promise hook, which makes V8 create the promise of each `await` as tracing's async hooks do. Exported spans' HTTP requests included.",
    "",
    markdownTable(["server", "promises per call"], rows),
  ].join("\n");
}
