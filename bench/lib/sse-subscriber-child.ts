/**
 * A process of SSE subscribers for bench/http.ts (forked with IPC): it opens `subscribers`
 * JSON-RPC SubscribeToTask streams over HTTP/1.1 (undici, a connection each), parses every
 * stream with eventsource-parser and every event's JSON, and checks what each subscriber got:
 * the task first, then the artifact's chunks `#seq=0;…` … `#seq=n-1;…` in order (each text part,
 * hashed as bench/agents/fanout-agent.mjs hashes what it published: text, NUL), then COMPLETED.
 *
 *   parent -> { cmd: "start", ...SseStart }   child -> { type: "attached" } (every stream got its first event)
 *                                             child -> { type: "done", ...SseReport } (every stream ended)
 */
import { createHash } from "node:crypto";
import { createParser } from "eventsource-parser";
import { Pool } from "undici";

export interface SseStart {
  readonly origin: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly subscribers: number;
  readonly expectArtifacts: number;
}

export interface SseReport {
  /** Streams that began with the task, got every chunk 0..n-1 in order, then COMPLETED, and ended. */
  readonly complete: number;
  /** Streams whose chunks came out of order or with gaps. */
  readonly outOfOrder: number;
  /** Hash of a stream's chunk texts (each followed by NUL) -> streams. */
  readonly contentHashes: Record<string, number>;
  /** Chunks received, all streams. */
  readonly chunks: number;
  /** SSE events received, all streams. */
  readonly events: number;
  readonly firstProblem?: string;
  /** Epoch ms of the last event received. */
  readonly lastReceiveAt: number;
  /** This process's CPU µs from "attached" to "done". */
  readonly cpuMicros: number;
}

interface Result {
  readonly task: unknown;
  readonly artifactUpdate?: { artifact?: { parts?: Array<{ text?: string }> } };
  readonly statusUpdate?: { status?: { state?: string } };
}

function subscribe(
  pool: Pool,
  start: SseStart,
  onFirst: () => void,
): Promise<{ ok: boolean; inOrder: boolean; hash: string; chunks: number; events: number; problem?: string }> {
  let events = 0;
  let chunks = 0;
  let inOrder = true;
  let sawTask = false;
  let final: string | undefined;
  let problem: string | undefined;
  const content = createHash("sha256");
  const parser = createParser({
    onEvent(event) {
      if (events++ === 0) onFirst();
      const rpc = JSON.parse(event.data) as { result?: Result; error?: unknown };
      const result = rpc.result;
      if (result === undefined) return void (problem ??= `error event: ${event.data.slice(0, 200)}`);
      if (result.task !== undefined) sawTask = true;
      for (const part of result.artifactUpdate?.artifact?.parts ?? []) {
        const text = part.text ?? "";
        if (!text.startsWith(`#seq=${chunks};`)) inOrder = false;
        content.update(text).update("\0");
        chunks++;
      }
      const state = result.statusUpdate?.status?.state;
      if (state !== undefined) final = state;
    },
  });
  return pool
    .request({ method: "POST", path: start.path, headers: start.headers, body: start.body })
    .then(async (res) => {
      if (res.statusCode !== 200) problem = `HTTP ${res.statusCode}`;
      const decoder = new TextDecoder();
      for await (const bytes of res.body as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(bytes, { stream: true }));
      lastReceiveAt = performance.timeOrigin + performance.now();
      const ok = problem === undefined && sawTask && inOrder && chunks === start.expectArtifacts && final === "TASK_STATE_COMPLETED";
      if (!ok) problem ??= `task ${sawTask}, ${chunks} chunks, in order ${inOrder}, ended ${final}`;
      return { ok, inOrder, hash: content.digest("hex"), chunks, events, problem };
    })
    .catch((error: unknown) => {
      if (events === 0) onFirst(); // a stream that never opened must not hold up "attached"
      return { ok: false, inOrder: false, hash: "", chunks, events, problem: (error as Error)?.message ?? String(error) };
    });
}

let lastReceiveAt = 0;

process.on("message", (msg: { cmd?: string } & SseStart) => {
  if (msg?.cmd !== "start") return;
  const pool = new Pool(msg.origin, { connections: msg.subscribers, pipelining: 1 });
  let waitingFirst = msg.subscribers;
  let cpuAtAttach: NodeJS.CpuUsage | undefined;
  const first = () => {
    if (--waitingFirst === 0) {
      cpuAtAttach = process.cpuUsage();
      process.send!({ type: "attached" });
    }
  };
  const streams = Array.from({ length: msg.subscribers }, () => subscribe(pool, msg, first));
  void Promise.all(streams).then(async (all) => {
    const cpu = process.cpuUsage(cpuAtAttach);
    const contentHashes: Record<string, number> = {};
    for (const s of all) contentHashes[s.hash] = (contentHashes[s.hash] ?? 0) + 1;
    const report: SseReport = {
      complete: all.filter((s) => s.ok).length,
      outOfOrder: all.filter((s) => !s.inOrder).length,
      contentHashes,
      chunks: all.reduce((n, s) => n + s.chunks, 0),
      events: all.reduce((n, s) => n + s.events, 0),
      firstProblem: all.find((s) => s.problem !== undefined)?.problem,
      lastReceiveAt,
      cpuMicros: cpu.user + cpu.system,
    };
    process.send!({ type: "done", ...report }, () => process.exit(0));
    await pool.close();
  });
});
