/**
 * The traced call's in-process cost, this build against another, in separate processes taken in
 * turns: each process (bench/lib/tracing-call-loop.mjs) runs the Tracing class's hooks for one
 * blocking SendMessage and our OTLP processor writing both spans (what otel-spans' last line
 * measures), from one build's dist/, and reports its best block's CPU per call. Pairs alternate
 * which build goes first; the figure is the median of the per-pair ratios.
 *
 *   npm run build && npm run bench -- tracing-calls --baseline=DIR [--pairs=N] [--calls=N] [--blocks=N]
 *
 * Why: the server benchmark (`observability`) cannot resolve a few µs on the shared machine (its
 * per-round ratios spread 0.6–2.5× at load 5–8), and two builds cannot share one process (each
 * registers OpenTelemetry's globals). The best block of a process is what the code costs with the
 * least interference; the pairs' spread is printed beside the median.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { median, percentiles } from "./lib/stats.js";
import { markdownTable } from "./lib/table.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const LOOP = join(ROOT, "bench", "lib", "tracing-call-loop.mjs");

function bestOf(root: string, calls: number, blocks: number): number {
  const out = execFileSync(process.execPath, [LOOP, root, String(calls), String(blocks)], { cwd: ROOT, encoding: "utf8" });
  const { cpu } = JSON.parse(out.trim().split("\n").pop()!) as { cpu: number[] };
  return Math.min(...cpu);
}

export async function runTracingCalls(args: readonly string[]): Promise<string> {
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const baseline = value("baseline");
  if (baseline === undefined) throw new Error("--baseline=DIR: a built checkout to compare with");
  const pairs = Number(value("pairs") ?? 8);
  const calls = Number(value("calls") ?? 100_000);
  const blocks = Number(value("blocks") ?? 4);
  const rows: string[][] = [];
  const ratios: number[] = [];
  const loads: number[] = [];
  for (let i = 0; i < pairs; i++) {
    loads.push(loadavg()[0]!);
    let ours: number;
    let base: number;
    if (i % 2 === 0) {
      ours = bestOf(ROOT, calls, blocks);
      base = bestOf(resolve(baseline), calls, blocks);
    } else {
      base = bestOf(resolve(baseline), calls, blocks);
      ours = bestOf(ROOT, calls, blocks);
    }
    ratios.push(ours / base);
    rows.push([String(i + 1), i % 2 === 0 ? "this build" : "baseline", ours.toFixed(2), base.toFixed(2), `${(ours / base).toFixed(2)}×`]);
  }
  const [p25, p75] = percentiles(Float64Array.from(ratios), [25, 75]);
  return [
    "# A traced call in-process: this build ÷ another (tracing-calls)",
    "",
    `${new Date().toISOString()}; load average ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}; baseline ${baseline}; ${pairs} pairs, best of ${blocks} blocks of ${calls} calls per process.`,
    "",
    `**This build ÷ baseline, CPU per traced call: ${median(ratios).toFixed(2)}× (p25–p75 ${p25!.toFixed(2)}–${p75!.toFixed(2)}×; ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×)**`,
    "",
    markdownTable(["pair", "first", "this build µs/call", "baseline µs/call", "ratio"], rows),
  ].join("\n");
}
