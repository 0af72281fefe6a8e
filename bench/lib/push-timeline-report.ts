/**
 * Where a push delivery's publish → POST received time goes, from the server's timeline
 * (bench/lib/push-timeline.mjs) joined with the receiver's arrivals: waiting for the commit that
 * holds the write, the commit itself, commit end → the POST's dispatch (the service picks the
 * entry up, a free request slot, the request is built), dispatch → body written, and written →
 * received (loopback and the receiver's own turn). Each step's p50 and p90 over the deliveries.
 */
import { readFileSync } from "node:fs";
import { percentiles } from "./stats.js";

interface Timeline {
  /** [startMs, endMs, writes], in commit order. */
  readonly commits: Array<[number, number, number]>;
  /** "taskId e<i>" -> [dispatchedMs, bodySentMs] */
  readonly posts: Record<string, [number, number]>;
}

export interface Arrival {
  readonly publishedMs: number;
  readonly arrivedMs: number;
}

export function timelineBreakdown(file: string, arrivals: ReadonlyMap<string, Arrival>): string {
  const { commits, posts } = JSON.parse(readFileSync(file, "utf8")) as Timeline;
  const steps: Record<string, number[]> = {
    "publish → commit start": [],
    commit: [],
    "commit end → POST dispatched": [],
    "dispatched → body written": [],
    "written → received": [],
    total: [],
  };
  const usedCommits = new Map<number, number>();
  for (const [key, { publishedMs, arrivedMs }] of arrivals) {
    const post = posts[key];
    if (post === undefined) continue;
    const [dispatched, written] = post;
    let ready = publishedMs;
    const at = firstCommitFrom(commits, publishedMs);
    if (at !== undefined && commits[at]![0] <= dispatched) {
      const [start, end, writes] = commits[at]!;
      steps["publish → commit start"]!.push(start - publishedMs);
      steps.commit!.push(end - start);
      usedCommits.set(at, writes);
      ready = end;
    }
    steps["commit end → POST dispatched"]!.push(dispatched - ready);
    if (written > 0) {
      steps["dispatched → body written"]!.push(written - dispatched);
      steps["written → received"]!.push(arrivedMs - written);
    }
    steps.total!.push(arrivedMs - publishedMs);
  }
  const parts = Object.entries(steps)
    .filter(([, v]) => v.length > 0)
    .map(([name, v]) => {
      const [p50, p90] = percentiles(Float64Array.from(v), [50, 90]);
      return `${name} ${p50!.toFixed(2)}/${p90!.toFixed(2)}`;
    });
  const writes = [...usedCommits.values()];
  const [w50, wMax] = percentiles(Float64Array.from(writes), [50, 100]);
  const commitsLine = writes.length > 0 ? `; ${writes.length} commits held them, writes per commit p50 ${w50} max ${wMax}` : "";
  return `breakdown ms p50/p90: ${parts.join(", ")}${commitsLine}${burstCommits(commits, usedCommits)}`;
}

/**
 * How long the first commit of each burst took (after 100 ms without one: the previous burst's
 * delivered rows wait for it), against the burst's other commits; and their writes.
 */
function burstCommits(commits: Timeline["commits"], used: ReadonlyMap<number, number>): string {
  const first: number[] = [];
  const rest: number[] = [];
  let lastEnd = Number.NEGATIVE_INFINITY;
  commits.forEach(([start, end], i) => {
    if (used.has(i)) (start - lastEnd > 100 ? first : rest).push(end - start);
    lastEnd = end;
  });
  if (first.length === 0 || rest.length === 0) return "";
  const p50 = (v: number[]) => percentiles(Float64Array.from(v), [50])[0]!.toFixed(2);
  return `; commit ms p50: a burst's first ${p50(first)} (${first.length}), the others ${p50(rest)} (${rest.length})`;
}

/** Index of the first commit that started at or after `ms` (commits are in start order). */
function firstCommitFrom(commits: Timeline["commits"], ms: number): number | undefined {
  let lo = 0;
  let hi = commits.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (commits[mid]![0] < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo < commits.length ? lo : undefined;
}
