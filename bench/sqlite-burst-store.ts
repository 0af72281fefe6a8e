/**
 * Issue 15 item 5, the store alone: an agent's 100,000-chunk burst (appends to one artifact in
 * one event-loop turn, then COMPLETED) written straight into the repository, in process, on the
 * memory store and on SQLite (event log on, commit window 1 ms, as the server's defaults), in
 * interleaved rounds: CPU per chunk and bytes written (wchar). The chunks are made before the
 * clock starts, so what is measured is the store's own work. Much less noisy on a shared machine
 * than the server benchmark (issue15-sqlite), whose figure this explains.
 *
 *   npm run bench -- sqlite-burst-store [--rounds=10] [--baseline=DIR]
 *
 * --baseline=DIR: also the SQLite store of another source tree (e.g. `git archive` of an older
 * commit; its src/ is loaded through tsx, with this tree's node_modules), for a before/after.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { create } from "@bufbuild/protobuf";
import { ArtifactSchema, PartSchema, TaskState } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskRepository } from "../src/lifecycle/task-repository.js";
import { MemoryTaskRepository } from "../src/storage/memory/memory-task-repository.js";
import { openSqliteTaskRepository } from "../src/storage/sqlite/sqlite-task-repository.js";
import { Clock, newTask, scopeOf, statusChange } from "../test/support/tasks.js";
import { markdownTable } from "./lib/table.js";

const N = 100_000;
const SCOPE = scopeOf("bench", "alice");
type Store = TaskRepository & { close(): Promise<void> };
type Open = (file: string) => Store;

const bytesWritten = () => Number(/wchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1] ?? Number.NaN);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function burst(open: Open, clock: Clock): Promise<{ cpuMicros: number; bytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), "sqlite-burst-store-"));
  const repo = open(join(dir, "tasks.db"));
  try {
    const task = newTask({ micros: clock.next(), text: "q" });
    await repo.create(SCOPE, task);
    let version = await repo.update(SCOPE, task.id, 1, statusChange(TaskState.WORKING, clock.next()));
    const chunks = Array.from({ length: N }, (_, i) =>
      create(ArtifactSchema, {
        artifactId: "out",
        name: "out",
        parts: [create(PartSchema, { content: { case: "text", value: `#seq=${i};t=1764620000000.000;` } })],
      }),
    );
    const bytes0 = bytesWritten();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      version = repo.update(SCOPE, task.id, version, {
        kind: "artifact",
        artifact: chunks[i]!,
        append: i > 0,
        lastChunk: i === N - 1,
        fresh: true,
      }) as number; // both stores answer within the call
    }
    await repo.update(SCOPE, task.id, version, statusChange(TaskState.COMPLETED, clock.next()));
    const cpu = process.cpuUsage(cpu0);
    return { cpuMicros: cpu.user + cpu.system, bytes: bytesWritten() - bytes0 };
  } finally {
    await repo.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runSqliteBurstStore(args: readonly string[]): Promise<string> {
  const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 10);
  const baseline = args.find((a) => a.startsWith("--baseline="))?.slice(11);
  const eventLog = { retentionMs: 10 * 60_000 };
  const stores = new Map<string, Open>([
    ["memory", () => new MemoryTaskRepository({ eventLog }) as unknown as Store],
    ["sqlite", (file) => openSqliteTaskRepository({ file, eventLog, commitWindowMs: 1 })],
  ]);
  if (baseline !== undefined) {
    const url = pathToFileURL(resolve(baseline, "src/storage/sqlite/sqlite-task-repository.ts")).href;
    const old = (await import(url)) as { openSqliteTaskRepository: typeof openSqliteTaskRepository };
    stores.set("sqlite-baseline", (file) => old.openSqliteTaskRepository({ file, eventLog, commitWindowMs: 1 }) as unknown as Store);
  }
  const clock = new Clock();
  const results = new Map<string, Array<{ cpuMicros: number; bytes: number }>>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [...stores] : [...stores].reverse();
    for (const [name, open] of order) {
      const r = await burst(open, clock);
      results.set(name, [...(results.get(name) ?? []), r]);
      process.stderr.write(`${name} round ${round + 1}: ${(r.cpuMicros / N).toFixed(2)} µs/chunk, ${(r.bytes / 1e6).toFixed(1)} MB written\n`);
    }
  }
  const memory = results.get("memory")!;
  const rows = [...results].map(([name, rs]) => [
    name,
    (median(rs.map((r) => r.cpuMicros)) / N).toFixed(2),
    (Math.min(...rs.map((r) => r.cpuMicros)) / N).toFixed(2),
    name === "memory" ? "" : (median(rs.map((r, i) => r.cpuMicros - memory[i]!.cpuMicros)) / N).toFixed(2),
    (median(rs.map((r) => r.bytes)) / 1e6).toFixed(1),
  ]);
  return [
    `# sqlite-burst-store: ${N.toLocaleString("en-US")} appends in one turn, the store alone, ${rounds} interleaved rounds (shared machine)`,
    "",
    markdownTable(["store", "CPU µs / chunk (median)", "(lowest)", "above memory, same round (median)", "MB written (median)"], rows),
  ].join("\n");
}
