/**
 * Blocking SendMessage server CPU per call of two builds side by side, on the memory and the
 * SQLite store: a change to the stores measured against the build before it, in one run.
 *
 *   node --import tsx bench/store-builds.ts <before checkout> [after checkout (default: this one)] [--rounds=N] [--calls=N]
 *
 * Each checkout must be built (`npm run build`). Four servers (before/after x memory/SQLite) run
 * at once with the trivial agent; each round measures them back to back, the order turning, and
 * the ratios are taken per round.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadClient, type LoadClient } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { median } from "./lib/stats.js";
import { formatNumber, formatRatio, markdownTable } from "./lib/table.js";

const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const request = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "bench-message-1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);

type Kind = "before memory" | "before sqlite" | "after memory" | "after sqlite";
const KINDS: Kind[] = ["before memory", "before sqlite", "after memory", "after sqlite"];

async function serve(root: string, store: "memory" | "sqlite", dir: string | undefined): Promise<{ server: ServerProcess; lc: LoadClient }> {
  const server = await startServerProcess({
    name: `${root} (${store})`,
    script: join(root, "dist/src/main.js"),
    cwd: root,
    captureStdout: false,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_STORE: store,
      ...(dir ? { A2A_DATA_DIR: dir } : {}),
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/trivial-agent.mjs",
    }),
  });
  const lc = loadClient(server.address, { "a2a-version": "1.0" });
  await waitUntilServing(server, () => lc.call(SEND, request), 60_000);
  return { server, lc };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const positional = args.filter((a) => !a.startsWith("--"));
  const before = resolve(positional[0] ?? "");
  const after = resolve(positional[1] ?? fileURLToPath(new URL("..", import.meta.url)));
  const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 6);
  const calls = Number(args.find((a) => a.startsWith("--calls="))?.slice(8) ?? 1_500);
  const dirs: string[] = [];
  const served = new Map<Kind, { server: ServerProcess; lc: LoadClient }>();
  try {
    for (const kind of KINDS) {
      const [which, store] = kind.split(" ") as ["before" | "after", "memory" | "sqlite"];
      const dir = store === "sqlite" ? mkdtempSync(join(tmpdir(), "a2a-store-builds-")) : undefined;
      if (dir) dirs.push(dir);
      served.set(kind, await serve(which === "before" ? before : after, store, dir));
    }
    const load = { path: SEND, request, inFlight: 32 };
    for (const s of served.values()) await drive(s.server, s.lc, load, 2_000);
    const results = new Map<Kind, PhaseResult[]>(KINDS.map((k) => [k, []]));
    for (let round = 0; round < rounds; round++) {
      const order = KINDS.map((_, i) => KINDS[(i + round) % KINDS.length]!);
      for (const kind of round % 2 === 0 ? order : order.reverse()) {
        const s = served.get(kind)!;
        results.get(kind)!.push(await measurePhase(s.server, s.lc, { ...load, calls }));
      }
      process.stderr.write(
        `round ${round + 1}/${rounds}: ${KINDS.map((k) => `${k} ${formatNumber(results.get(k)![round]!.serverCpuPerCall, 1)}`).join(", ")} µs/call\n`,
      );
    }
    const cpu = (k: Kind) => results.get(k)!.map((p) => p.serverCpuPerCall);
    const ratio = (a: Kind, b: Kind) => cpu(a).map((x, i) => x / cpu(b)[i]!);
    const spread = (r: number[]) => `${formatRatio(median(r))} (${formatRatio(Math.min(...r))}–${formatRatio(Math.max(...r))})`;
    const table = markdownTable(
      ["what", "median (range over rounds)"],
      [
        ...KINDS.map((k) => [
          `${k}: server CPU µs/call`,
          `${formatNumber(median(cpu(k)), 1)} (${formatNumber(Math.min(...cpu(k)), 1)}–${formatNumber(Math.max(...cpu(k)), 1)})`,
        ]),
        ["SQLite after ÷ before", spread(ratio("after sqlite", "before sqlite"))],
        ["memory after ÷ before", spread(ratio("after memory", "before memory"))],
        ["after: SQLite ÷ memory", spread(ratio("after sqlite", "after memory"))],
        ["before: SQLite ÷ memory", spread(ratio("before sqlite", "before memory"))],
      ],
    );
    process.stdout.write(`Blocking SendMessage, trivial agent, 32 in flight, ${rounds} rounds of ${calls} calls after 2,000 warm-up\n\n${table}\n`);
  } finally {
    for (const s of served.values()) {
      s.lc.close();
      await s.server.stop();
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
