/**
 * Issue 15 item 5's deciding run: one SendStreamingMessage of N chunks on our server with the
 * SQLite store (the default) beside the same server with the memory store, in interleaved rounds
 * through a plain grpc-js client (issue15.ts's `stream`), and whether SQLite is within 1.2× of
 * memory's server CPU per agent event.
 *
 *   npm run build && npm run bench -- issue15-sqlite [--profile] [--burst] [--baseline=DIR] [--rounds=N]     # ~2-3 minutes
 *
 * --baseline=DIR: also a SQLite server from DIR/dist (an older build), in the same rounds, for a
 * before/after. --profile: after the measured rounds, one unmeasured 100,000-chunk burst on each store under
 * V8's profiler, summarised in the report. --burst: only the 100,000-chunk burst rounds (5; to
 * iterate on that figure; the deciding run is the full one). --rounds=N: N rounds of each step
 * (of the burst alone with --burst), to tell a change from the rounds' spread.
 *
 * Servers: memory; SQLite with the default commit window (A2A_STORE_COMMIT_WINDOW=1ms); and, at
 * 5,000 chunks only, SQLite with the window off (0: a commit per event-loop turn, as before the
 * window) for the before/after in the same run. Paces as issue15: burst, and per-turn (an
 * event-loop turn after each chunk, one commit per chunk without the window).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, credentials } from "@grpc/grpc-js";
import { stream, type Pace, type Run } from "./issue15.js";
import { waitUntilServing } from "./lib/measure.js";
import { startServerProcess, type ServerProcess } from "./lib/server-process.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { formatNumber, markdownTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RESULTS = join(ROOT, "bench", "results");
const TARGET = 1.2;
const FIRST_CHUNK_MS = 2;

type Kind = "memory" | "sqlite" | "sqlite-window-0" | "sqlite-baseline";
const ENV: Record<Kind, Record<string, string>> = {
  memory: { A2A_STORE: "memory" },
  sqlite: { A2A_STORE: "sqlite" },
  "sqlite-window-0": { A2A_STORE: "sqlite", A2A_STORE_COMMIT_WINDOW: "0" },
  "sqlite-baseline": { A2A_STORE: "sqlite" },
};

function start(kind: Kind, dataDir: string, baseline: string | undefined): Promise<ServerProcess> {
  return startServerProcess({
    name: kind,
    script: kind === "sqlite-baseline" ? join(baseline!, "dist/src/main.js") : join(ROOT, "dist/src/main.js"),
    cwd: ROOT,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_DATA_DIR: join(dataDir, kind),
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/fanout-agent.mjs",
      // 100,000 chunks make a task of ~4 MB: above the default 4 MiB, the agent's last writes are refused.
      A2A_MAX_MESSAGE_BYTES: String(16 * 1024 * 1024),
      ...ENV[kind],
    }),
  });
}

const median = (xs: number[]) => (xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

export async function runIssue15Sqlite(
  options: { profile: boolean; burstOnly: boolean; baseline?: string; rounds?: number } = { profile: false, burstOnly: false },
): Promise<string> {
  mkdirSync(RESULTS, { recursive: true });
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const dataDir = mkdtempSync(join(tmpdir(), "issue15-sqlite-"));
  const kinds: Kind[] = options.burstOnly ? ["memory", "sqlite"] : ["memory", "sqlite", "sqlite-window-0"];
  if (options.baseline !== undefined) kinds.push("sqlite-baseline");
  const fullPlan: Array<{ n: number; pace: Pace; rounds: number; kinds: Kind[] }> = [
    { n: 5_000, pace: "per-turn", rounds: 5, kinds },
    { n: 5_000, pace: "burst", rounds: 5, kinds },
    { n: 100_000, pace: "per-turn", rounds: 2, kinds: kinds.filter((k) => k !== "sqlite-window-0") },
    { n: 100_000, pace: "burst", rounds: 3, kinds: kinds.filter((k) => k !== "sqlite-window-0") },
  ];
  const burstPlan = fullPlan.filter((s) => s.n === 100_000 && s.pace === "burst").map((s) => ({ ...s, rounds: options.rounds ?? 5 }));
  const plan = options.burstOnly ? burstPlan : options.rounds === undefined ? fullPlan : fullPlan.map((s) => ({ ...s, rounds: options.rounds! }));
  const servers = new Map<Kind, ServerProcess>();
  const clients = new Map<Kind, Client>();
  const runs: Array<{ n: number; pace: Pace; kind: Kind; round: number; run: Run }> = [];
  let profiles = "";
  try {
    for (const kind of kinds) {
      const s = await start(kind, dataDir, options.baseline);
      servers.set(kind, s);
      const client = new Client(s.address, credentials.createInsecure(), { "grpc.max_receive_message_length": 64 * 1024 * 1024 });
      clients.set(kind, client);
      await waitUntilServing(s, () => stream(s, "ours", 10, "burst", client));
      await stream(s, "ours", 2_000, "burst", client); // warm-up
      await stream(s, "ours", 2_000, "per-turn", client);
    }
    for (const step of plan) {
      for (let round = 0; round < step.rounds; round++) {
        const order = round % 2 === 0 ? step.kinds : [...step.kinds].reverse();
        for (const kind of order) {
          const run = await stream(servers.get(kind)!, "ours", step.n, step.pace, clients.get(kind)!);
          runs.push({ n: step.n, pace: step.pace, kind, round, run });
          log(
            `${kind} n=${step.n} ${step.pace} round ${round + 1}: ${formatNumber(run.cpuMicros / step.n, 2)} µs/event, ${run.responses} responses, ${run.chunks} chunks${run.inOrder ? "" : " OUT OF ORDER"}`,
          );
        }
      }
    }
    if (options.profile) {
      for (const kind of ["memory", "sqlite"] as const) {
        const file = join(RESULTS, `issue15-sqlite-${kind}-burst-${Date.now()}.cpuprofile`);
        await servers.get(kind)!.profileStart();
        await stream(servers.get(kind)!, "ours", 100_000, "burst", clients.get(kind)!);
        await servers.get(kind)!.profileStop(file);
        profiles += `\n\n### Profile: ${kind}, 100,000 chunks, burst (unmeasured run)\n\n${profileSummary(file, 100_000, 20)}\n\nProfile: ${file}`;
      }
    }
  } finally {
    for (const c of clients.values()) c.close();
    await Promise.all([...servers.values()].map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  }

  const of = (n: number, pace: Pace, kind: Kind) => runs.filter((r) => r.n === n && r.pace === pace && r.kind === kind);
  /** Per round: this server's CPU ÷ memory's in the same round; the median of the rounds. */
  const ratio = (n: number, pace: Pace, kind: Kind) => {
    const base = of(n, pace, "memory");
    const each = of(n, pace, kind).map((r, i) => r.run.cpuMicros / base[i]!.run.cpuMicros);
    return { median: median(each), each };
  };
  const lowest = (n: number, pace: Pace, kind: Kind) => Math.min(...of(n, pace, kind).map((r) => r.run.cpuMicros));
  const rows: string[][] = [];
  for (const step of plan) {
    for (const kind of step.kinds) {
      const rs = of(step.n, step.pace, kind);
      const r = kind === "memory" ? undefined : ratio(step.n, step.pace, kind);
      rows.push([
        step.n.toLocaleString("en-US"),
        step.pace,
        kind,
        formatNumber(median(rs.map((x) => x.run.cpuMicros / step.n)), 2),
        r === undefined ? "1" : `${r.median.toFixed(2)}× (${r.each.map((x) => x.toFixed(2)).join(", ")})`,
        formatNumber(median(rs.map((x) => x.run.responses))),
        rs.every((x) => x.run.chunks === step.n && x.run.inOrder) ? "yes" : "NO",
        formatNumber(median(rs.map((x) => x.run.firstChunkMs ?? Number.NaN)), 2),
      ]);
    }
  }
  const complete = runs.every((r) => r.run.chunks === r.n && r.run.inOrder);
  const firstChunk = median(of(5_000, "per-turn", "sqlite").map((r) => r.run.firstChunkMs ?? Number.NaN));
  const targets = (
    [
      ["per-turn 5,000: SQLite ÷ memory CPU per event", 5_000, "per-turn"],
      ["per-turn 100,000: SQLite ÷ memory CPU per event", 100_000, "per-turn"],
      ["burst 5,000: SQLite ÷ memory", 5_000, "burst"],
      ["burst 100,000: SQLite ÷ memory", 100_000, "burst"],
    ] as const
  )
    .filter(([, n, pace]) => plan.some((s) => s.n === n && s.pace === pace))
    .map(([what, n, pace]) => [what, ratio(n, pace, "sqlite").median] as const);
  const met = (v: number, wanted: number) => (Number.isFinite(v) && v <= wanted ? "met" : "**missed**");
  const targetRows = targets.map(([what, v]) => [what, `${v.toFixed(2)}×`, `≤ ${TARGET}×`, met(v, TARGET)]);
  if (!options.burstOnly)
    targetRows.push([
      "first chunk after the agent's write, SQLite per-turn 5,000 (median ms)",
      formatNumber(firstChunk, 2),
      `≤ ${FIRST_CHUNK_MS}`,
      met(firstChunk, FIRST_CHUNK_MS),
    ]);
  targetRows.push(["every chunk arrived, in order (all runs)", complete ? "yes" : "NO", "yes", complete ? "met" : "**missed**"]);
  const before = ratio(5_000, "per-turn", "sqlite-window-0").median;
  const report = [
    "# issue15-sqlite: one SendStreamingMessage of N chunks, SQLite ÷ memory store",
    "",
    `\`npm run bench -- issue15-sqlite${options.burstOnly ? " --burst" : ""}${options.rounds === undefined ? "" : ` --rounds=${options.rounds}`}${options.baseline === undefined ? "" : ` --baseline=${options.baseline}`}${options.profile ? " --profile" : ""}\` — ${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? "?"}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} (shared machine)`,
    "",
    markdownTable(
      [
        "N",
        "pace",
        "server",
        "CPU µs / agent event (median)",
        "÷ memory per round (median; rounds)",
        "responses on the wire",
        "every chunk, in order",
        "first chunk ms",
      ],
      rows,
    ),
    "",
    options.baseline === undefined
      ? ""
      : `Baseline (sqlite-baseline: the build in ${options.baseline}, same rounds), ÷ memory: ${plan.map((p) => `${p.pace} ${p.n.toLocaleString("en-US")} ${ratio(p.n, p.pace, "sqlite-baseline").median.toFixed(2)}×`).join(", ")}.`,
    "",
    // The lowest round of each server is what it costs when the shared machine left it alone: a check on the medians.
    `Lowest round, SQLite ÷ memory's lowest: ${plan.map((p) => `${p.pace} ${p.n.toLocaleString("en-US")} ${(lowest(p.n, p.pace, "sqlite") / lowest(p.n, p.pace, "memory")).toFixed(2)}×`).join(", ")}.`,
    "",
    options.burstOnly
      ? "Only the 100,000-chunk burst (--burst)."
      : `Without the commit window (sqlite-window-0, a commit per turn) per-turn 5,000 is ${before.toFixed(2)}× memory in this run.`,
    "",
    "### Targets",
    "",
    markdownTable(["target", "measured", "wanted", ""], targetRows),
    profiles,
  ].join("\n");
  writeFileSync(join(RESULTS, `issue15-sqlite-${Date.now()}.md`), report);
  return report;
}
