/**
 * A shorter run of issue 21's push benchmark for profiling work: only the paced phases (200/s and
 * 20/s), ours on SQLite and memory vs the SDK, interleaved, with an optional CPU profile of ours.
 *
 *   npm run bench -- push-paced [--rounds=N] [--profile] [--memory] [--baseline=DIR] [--timeline]
 *
 * --baseline=DIR: also runs ours (SQLite) from another checkout DIR (e.g. `git archive` of an
 * earlier commit, with node_modules linked), interleaved, and reports our CPU per delivery ÷ its.
 * --timeline: where each of our runs' publish → POST received time went (bench/lib/push-timeline.mjs).
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { paced, Receiver } from "./push.js";
import { profileSummary } from "./lib/cpu-profile.js";
import { median } from "./lib/stats.js";
import { formatNumber } from "./lib/table.js";

export async function runPushPaced(args: readonly string[]): Promise<string> {
  const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 2);
  const baseline = args.find((a) => a.startsWith("--baseline="))?.slice(11);
  const kinds: Array<"ours" | "memory" | "sdk" | "baseline"> = [
    "ours",
    ...(baseline !== undefined ? (["baseline"] as const) : []),
    ...(args.includes("--memory") ? (["memory"] as const) : []),
    "sdk",
  ];
  const timeline = args.includes("--timeline");
  const run = (kind: (typeof kinds)[number], tasks?: number, profileFile?: string) =>
    kind === "baseline"
      ? paced("ours", receiver, 10, 500, { profileFile, tasks, root: baseline, timeline })
      : paced(kind, receiver, 10, 500, { profileFile, tasks, timeline });
  const receiver = new Receiver();
  await receiver.start();
  const lines: string[] = [];
  try {
    const ratios: string[] = [];
    const againstBaseline: number[] = [];
    const p50AgainstBaseline: number[] = [];
    /** Per kind (not the SDK), per round: whether both of #21's targets held. */
    const targets = new Map<string, Array<{ cpu: number; p50: number; lost: number; reordered: number }>>();
    for (let round = 1; round <= rounds; round++) {
      const r: Record<string, Awaited<ReturnType<typeof paced>>> = {};
      for (const kind of kinds) {
        r[kind] = await run(kind);
        const x = r[kind]!;
        lines.push(
          `round ${round} ${kind} 200/s: ${x.delivered}/${x.expected} p50 ${formatNumber(x.p50, 1)} ms p99 ${formatNumber(x.p99, 1)} ms cpu ${formatNumber(x.cpuPerDeliveryUs)} µs/delivery (system ${formatNumber(x.systemPerDeliveryUs)}) reordered ${x.reordered}`,
        );
        if (x.breakdown !== undefined) lines.push(`  ${x.breakdown}`);
      }
      ratios.push(
        kinds
          .filter((k) => k !== "sdk")
          .map((k) => `${k} ${(r[k]!.cpuPerDeliveryUs / r.sdk!.cpuPerDeliveryUs).toFixed(2)}`)
          .join(", "),
      );
      for (const k of kinds.filter((k) => k !== "sdk")) {
        const x = r[k]!;
        if (!targets.has(k)) targets.set(k, []);
        targets.get(k)!.push({ cpu: x.cpuPerDeliveryUs / r.sdk!.cpuPerDeliveryUs, p50: x.p50, lost: x.expected - x.delivered, reordered: x.reordered });
      }
      if (baseline !== undefined) {
        againstBaseline.push(r.ours!.cpuPerDeliveryUs / r.baseline!.cpuPerDeliveryUs);
        p50AgainstBaseline.push(r.ours!.p50 / r.baseline!.p50);
      }
    }
    lines.push(`CPU per delivery ÷ SDK per round: ${ratios.join(" | ")}`);
    for (const [k, per] of targets) {
      const met = per.every((t) => t.cpu <= 0.5 && t.p50 < 5 && t.lost === 0 && t.reordered === 0);
      lines.push(
        `${k}: CPU ÷ SDK ≤ 0.5 and p50 < 5 ms at 200/s, none lost or reordered, every round: ${met ? "met" : "missed"} (${per.map((t) => `${t.cpu.toFixed(2)} / ${t.p50.toFixed(1)} ms`).join(", ")})`,
      );
    }
    if (baseline !== undefined) {
      const perRound = (xs: number[]) => `${xs.map((x) => x.toFixed(2)).join(", ")} (median ${median(xs).toFixed(2)})`;
      lines.push(`ours ÷ baseline CPU per delivery per round: ${perRound(againstBaseline)}`);
      lines.push(`ours ÷ baseline p50 at 200/s per round: ${perRound(p50AgainstBaseline)}`);
    }
    for (const kind of kinds.filter((k) => k !== "baseline")) {
      const x = await run(kind, 10);
      lines.push(`${kind} 20/s: p50 ${formatNumber(x.p50, 1)} ms p99 ${formatNumber(x.p99, 1)} ms`);
      if (x.breakdown !== undefined) lines.push(`  ${x.breakdown}`);
    }
    if (args.includes("--profile")) {
      // The memory store too when it runs: what SQLite adds is the difference of the two profiles.
      for (const kind of kinds.filter((k) => k === "ours" || k === "memory")) {
        const file = join(tmpdir(), `push-paced-${process.pid}-${kind}.cpuprofile`);
        const x = await paced(kind, receiver, 10, 500, { profileFile: file });
        lines.push(`profiled ${kind}: p50 ${formatNumber(x.p50, 1)} ms, ${file}`, "", profileSummary(file, x.delivered, 30));
      }
    }
  } finally {
    await receiver.close();
  }
  return lines.join("\n");
}
