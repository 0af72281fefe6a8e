/**
 * What V8's compiler costs each stream: one server of ours (or of a baseline build) run with
 * --trace-opt --trace-deopt, streams of 5,000 chunks alternating paces as the single-stream phase
 * of `issue4 --single` runs them (one burst and one per-turn to warm up, then bursts, then
 * per-turn streams), and per stream: server CPU per event, the TurboFan compile time V8 reports
 * for the jobs that finished during it ("took a, b, c ms": the three phases added up; the middle
 * one runs on a worker thread, but counts in the server's CPU all the same), how many
 * compilations and deoptimizations, and which functions were deoptimized (V8 names them without
 * their file: ours, grpc-js's and Node's alike; --trace-deopt-verbose gives the source positions).
 *
 *   npm run build && npm run bench -- stream-jit [--baseline=DIR] [--sequence=b,t,b,b,b,t,t,t] [--n=5000] [--gap-ms=N] [--gc] [--full-gc] [--log=FILE] [--bare] [--node-flag=F]
 *
 * --gap-ms: an idle pause before each stream, as the SDK's stream between two of ours in issue4's
 * rounds (15 s and more); --gc: also count the collections in each stream (--trace-gc); --log=FILE:
 * the trace itself, each stream's lines after a "=== server stream i pace" line; --full-gc: a forced
 * full collection before each stream (none open then); --bare: the bare grpc-js server instead of ours
 * (bench/servers/bare-stream-server.ts: the same paces, the floor's own recompilation);
 * --node-flag=F (repeatable): a node/V8 flag for the server, to test what recompilation depends on.
 *
 * Why: the per-turn cost per event at 5,000 chunks swung 49-115 µs between rounds of the mixed
 * bench, and a stream's share of recompilation is invisible in a CPU profile of one stream. The
 * trace flags slow the server a little; the CPU figures here are for comparing streams, not targets.
 */
import { appendFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, credentials } from "@grpc/grpc-js";
import { stream, type Pace } from "./issue15.js";
import { waitUntilServing } from "./lib/measure.js";
import { startServerProcess } from "./lib/server-process.js";
import { formatNumber, markdownTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface StreamJit {
  compileMs: number;
  compiles: number;
  deopts: number;
  /** Functions deoptimized, with the reason, and how often. */
  ours: Map<string, number>;
  /** With --gc: scavenges and mark-compacts seen (--trace-gc), and their pause ms. */
  scavenges: number;
  markCompacts: number;
  gcMs: number;
}

const TOOK = /took ([\d.]+), ([\d.]+), ([\d.]+) ms/;
const GC = /(Scavenge|Mark-Compact|Mark-sweep)[^,]*, ([\d.]+) \/ [\d.]+ ms/;
const DEOPT = /reason: ([^)]*)\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >]*)/;

async function traced(
  name: string,
  script: string,
  sequence: readonly Pace[],
  n: number,
  gapMs: number,
  gc: boolean,
  traceLog?: string,
  extraFlags: readonly string[] = [],
  fullGc = false,
): Promise<string[][]> {
  const current: { jit: StreamJit } = { jit: fresh() };
  let partial = "";
  const onStdout = (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop()!;
    if (traceLog !== undefined) appendFileSync(traceLog, `${lines.join("\n")}\n`);
    for (const line of lines) {
      const took = TOOK.exec(line);
      if (took !== null && line.startsWith("[completed compiling")) {
        current.jit.compileMs += Number(took[1]) + Number(took[2]) + Number(took[3]);
        current.jit.compiles++;
      }
      const collection = GC.exec(line);
      if (collection !== null) {
        if (collection[1] === "Scavenge") current.jit.scavenges++;
        else current.jit.markCompacts++;
        current.jit.gcMs += Number(collection[2]);
      }
      const deopt = DEOPT.exec(line);
      if (deopt !== null) {
        current.jit.deopts++;
        const key = `${deopt[2]} (${deopt[1]})`;
        current.jit.ours.set(key, (current.jit.ours.get(key) ?? 0) + 1);
      }
    }
  };
  const bare = name === "bare";
  const server = await startServerProcess({
    name,
    script,
    tsx: bare,
    cwd: ROOT,
    nodeFlags: ["--trace-opt", "--trace-deopt", ...(gc ? ["--trace-gc"] : []), ...extraFlags],
    captureStdout: true,
    onStdout,
    env: (port) => ({
      A2A_LISTEN: `127.0.0.1:${port}`,
      A2A_LOG_LEVEL: "warn",
      A2A_LOG_FORMAT: "json",
      A2A_STORE: "memory",
      A2A_CARD_LISTEN: "off",
      A2A_AGENT_MODULE: "bench/agents/fanout-agent.mjs",
    }),
  });
  const client = new Client(server.address, credentials.createInsecure(), { "grpc.max_receive_message_length": 64 * 1024 * 1024 });
  const rows: string[][] = [];
  try {
    await waitUntilServing(server, () => stream(server, bare ? "bare" : "ours", 10, "burst", client));
    for (let i = 0; i < sequence.length; i++) {
      const pace = sequence[i]!;
      // As the single-stream phase: the SDK's stream (15 s and more) runs between two of ours.
      if (gapMs > 0 && i > 0) await new Promise((r) => setTimeout(r, gapMs));
      // --full-gc: a full collection before each stream (while no stream is open), as V8's memory reducer makes in such a gap.
      if (fullGc && i > 0) await server.usageAfterGc();
      if (traceLog !== undefined) appendFileSync(traceLog, `=== ${name} stream ${i + 1} ${pace}\n`);
      current.jit = fresh();
      const run = await stream(server, bare ? "bare" : "ours", n, pace, client);
      // Compile jobs a stream set off finish shortly after it: count them with it.
      await new Promise((r) => setTimeout(r, 300));
      const { jit } = current;
      rows.push([
        name,
        String(i + 1),
        pace,
        formatNumber(run.cpuMicros / n, 2),
        formatNumber(jit.compileMs, 1),
        formatNumber((jit.compileMs * 1000) / n, 2),
        String(jit.compiles),
        String(jit.deopts),
        ...(gc ? [`${jit.scavenges} / ${jit.markCompacts}, ${formatNumber(jit.gcMs, 1)} ms`] : []),
        [...jit.ours].map(([k, c]) => (c > 1 ? `${k} ×${c}` : k)).join("; "),
      ]);
      process.stderr.write(`${name} stream ${i + 1} ${pace}: ${rows[rows.length - 1]!.slice(3, 8).join(" | ")}\n`);
    }
  } finally {
    client.close();
    await server.stop();
  }
  return rows;
}

function fresh(): StreamJit {
  return { compileMs: 0, compiles: 0, deopts: 0, ours: new Map(), scavenges: 0, markCompacts: 0, gcMs: 0 };
}

export async function runStreamJit(args: readonly string[]): Promise<string> {
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const n = Number(value("n") ?? 5_000);
  const sequence = (value("sequence") ?? "b,t,b,b,b,t,t,t").split(",").map((p): Pace => (p === "b" ? "burst" : "per-turn"));
  const baseline = value("baseline");
  const gapMs = Number(value("gap-ms") ?? 0);
  const gc = args.includes("--gc");
  const traceLog = value("log");
  // --node-flag=F (repeatable): a V8/node flag for the servers, to test what a stream's recompilation depends on.
  const extraFlags = args.filter((a) => a.startsWith("--node-flag=")).map((a) => a.slice("--node-flag=".length));
  const rows = args.includes("--bare")
    ? await traced("bare", join(ROOT, "bench/servers/bare-stream-server.ts"), sequence, n, gapMs, gc, traceLog, extraFlags, args.includes("--full-gc"))
    : await traced("ours", join(ROOT, "dist/src/main.js"), sequence, n, gapMs, gc, traceLog, extraFlags, args.includes("--full-gc"));
  if (baseline !== undefined)
    rows.push(...(await traced("baseline", resolve(baseline, "dist/src/main.js"), sequence, n, gapMs, gc, traceLog, extraFlags, args.includes("--full-gc"))));
  return [
    `# stream-jit: V8 compile and deopt work per stream of ${formatNumber(n)} chunks`,
    "",
    `\`npm run bench -- stream-jit${args.length > 0 ? ` ${args.join(" ")}` : ""}\` — ${new Date().toISOString()} (shared machine; the servers run with --trace-opt --trace-deopt)`,
    "",
    markdownTable(
      [
        "server",
        "stream",
        "pace",
        "CPU µs / event",
        "TurboFan compile ms",
        "compile µs / event",
        "compilations",
        "deopts",
        ...(gc ? ["scavenges / full GCs, pause ms"] : []),
        "deoptimized (reason)",
      ],
      rows,
    ),
  ].join("\n");
}
