/**
 * What releasing each closed HTTP/2 stream's listeners (src/protocol/call-retention.ts: releaseStreamOnClose) saves a
 * plain grpc-js server: the bare server of the issue3 benchmark, with and without it, side by
 * side in interleaved rounds (the order alternates), blocking SendMessage, 32 calls in flight.
 * Our server does it on every call, the issue3 ceiling (a plain grpc-js server) does not; this
 * is how much of ours ÷ bare comes from that one change.
 *
 *   npm run bench -- stream-release
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { MessageSchema, Role, SendMessageRequestSchema, SendMessageResponseSchema, TaskState } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadClient } from "./lib/load.js";
import { drive, measurePhase, waitUntilServing, type PhaseResult } from "./lib/measure.js";
import { startServerProcess } from "./lib/server-process.js";
import { median } from "./lib/stats.js";
import { formatNumber, markdownTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const SEND = "/lf.a2a.v1.A2AService/SendMessage";
const ROUNDS = 12;
const CALLS_PER_ROUND = 2_500;
const WARMUP = 5_000;

const request = Buffer.from(
  toBinary(
    SendMessageRequestSchema,
    create(SendMessageRequestSchema, {
      message: create(MessageSchema, { messageId: "bench-message-1", role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }),
    }),
  ),
);

/** A completed task with one artifact, the shape and size of our server's answer in issue3. */
function responseBytes(): Uint8Array {
  const taskId = "019ad5f0-0000-7000-8000-000000000001";
  const contextId = "019ad5f0-0000-7000-8000-000000000002";
  return toBinary(
    SendMessageResponseSchema,
    create(SendMessageResponseSchema, {
      payload: {
        case: "task",
        value: {
          id: taskId,
          contextId,
          status: { state: TaskState.COMPLETED, timestamp: timestampFromMs(Date.now()) },
          artifacts: [{ artifactId: "019ad5f0-0000-7000-8000-000000000003", name: "answer", parts: [{ content: { case: "text", value: "4" } }] }],
          history: [{ messageId: "bench-message-1", contextId, taskId, role: Role.USER, parts: [{ content: { case: "text", value: "What is 2 + 2?" } }] }],
        },
      },
    }),
  );
}

export async function runStreamRelease(): Promise<string> {
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`[stream-release] ${s}\n`);
  const startedAt = new Date();
  const load0 = loadavg()[0]!;
  const responseFile = join(RESULTS, "stream-release-response.bin");
  writeFileSync(responseFile, responseBytes());
  const start = async (label: string, release: boolean) => {
    const server = await startServerProcess({
      name: label,
      script: join(ROOT, "bench/servers/bare-server.ts"),
      tsx: true,
      env: { BENCH_RESPONSE_FILE: responseFile, BENCH_RELEASE_STREAMS: release ? "1" : "0" },
    });
    const lc = loadClient(server.address, { "a2a-version": "1.0" });
    await waitUntilServing(server, () => lc.call(SEND, request));
    return { label, server, lc, phases: [] as PhaseResult[] };
  };
  const servers = [await start("bare grpc-js", false), await start("bare grpc-js, streams released", true)];
  try {
    const load = { path: SEND, request, inFlight: 32 };
    for (const s of servers) await drive(s.server, s.lc, load, WARMUP);
    // As in issue3: a full collection first, and the calls right after it not measured.
    for (const s of servers) await s.server.usageAfterGc();
    for (const s of servers) await drive(s.server, s.lc, load, Math.ceil(WARMUP / 3));
    for (let round = 0; round < ROUNDS; round++) {
      log(`round ${round + 1}/${ROUNDS}`);
      for (const s of round % 2 === 0 ? servers : [...servers].reverse())
        s.phases.push(await measurePhase(s.server, s.lc, { ...load, calls: CALLS_PER_ROUND }));
    }
  } finally {
    for (const s of servers) {
      s.lc.close();
      await s.server.stop();
    }
  }
  const [plain, released] = servers as [(typeof servers)[0], (typeof servers)[0]];
  const ratios = released.phases.map((p, i) => p.serverCpuPerCall / plain.phases[i]!.serverCpuPerCall);
  const cpu = (s: typeof plain) => median(s.phases.map((p) => p.serverCpuPerCall));
  const report = [
    "## Releasing closed HTTP/2 streams' listeners, on a plain grpc-js server",
    "",
    "Reproduce: `npm run bench -- stream-release`",
    "",
    `${startedAt.toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model ?? "?"} · load average ${load0.toFixed(2)} at start`,
    "",
    `Blocking SendMessage answered with prebuilt bytes (${formatNumber(responseBytes().length)} B), 32 calls in flight, ${ROUNDS} interleaved rounds of ${formatNumber(CALLS_PER_ROUND)} calls per server.`,
    "",
    markdownTable(
      ["round", `${plain.label} CPU µs/call`, `${released.label} CPU µs/call`, "released ÷ plain"],
      plain.phases.map((p, i) => [String(i + 1), formatNumber(p.serverCpuPerCall), formatNumber(released.phases[i]!.serverCpuPerCall), ratios[i]!.toFixed(2)]),
    ),
    "",
    `Median server CPU per call: ${formatNumber(cpu(plain))} µs plain, ${formatNumber(cpu(released))} µs with streams released; median of the per-round ratios **${median(ratios).toFixed(2)}×** (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}).`,
  ].join("\n");
  const file = join(RESULTS, `stream-release-${startedAt.toISOString().replace(/[:.]/g, "-")}.md`);
  writeFileSync(file, `${report}\n`);
  log(`written to ${file}`);
  return report;
}
