/**
 * A process of stream subscribers as users run them: @grpc/grpc-js clients with the generated
 * (ts-proto) A2AServiceClient, every StreamResponse decoded. Forked by subscribers.ts
 * (`client: "grpc-js"`), same IPC as subscriber-child.ts:
 *
 *   parent -> { cmd: "start", ...StartCommand }   child -> { type: "attached" } (every stream got its first event)
 *   parent -> { cmd: "resume" } (stalled mode)    child -> { type: "done", ...SubscriberReport } (every stream ended)
 *
 * Content, not counts: each stream rebuilds the artifacts it was told about, starting from the
 * task snapshot and applying every artifact update as a client must (append: the parts join the
 * artifact's; otherwise the artifact is replaced whole), so a merged update counts exactly
 * as the updates it stands for. At the end each stream's artifact `out` is hashed (SHA-256 of its
 * text parts, each followed by a NUL byte); the parent compares every hash with the agent's own
 * (the texts it wrote, reported over the server's IPC channel). Order is checked on the way by the
 * `#seq=<n>;` markers; latency from their `t=<ms>` stamps.
 */
import { createHash } from "node:crypto";
import { credentials, Metadata, status, type ClientReadableStream } from "@grpc/grpc-js";
import { A2AServiceClient, SubscribeToTaskRequest, type Part, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { StartCommand, SubscriberReport } from "./subscriber-child.js";

const STATUS_NAME: Record<number, string> = Object.fromEntries(Object.entries(status).map(([k, v]) => [v, k]));
const MARKER = /^#seq=(\d+);t=([\d.]+);/;
const TASK_STATE_COMPLETED = 3;

interface Sub {
  readonly call: ClientReadableStream<StreamResponse>;
  received: number;
  /** Chunks seen in artifact updates (parts), all kinds. */
  artifacts: number;
  next: number;
  ordered: boolean;
  firstIsTask: boolean;
  lastWasCompleted: boolean;
  /** The artifacts as this client holds them: id -> parts. */
  readonly artifactsById: Map<string, Part[]>;
  code?: number;
  details?: string;
}

export function hashTexts(texts: Iterable<string>): string {
  const h = createHash("sha256");
  for (const t of texts) h.update(t).update("\0");
  return h.digest("hex");
}

function start(cmd: StartCommand): void {
  const request = SubscribeToTaskRequest.decode(cmd.request);
  // One channel per connection: a local subchannel pool keeps grpc-js from sharing one HTTP/2 connection between them.
  const clients = Array.from(
    { length: cmd.connections },
    (_, i) => new A2AServiceClient(cmd.address, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1, "bench.connection": i }),
  );
  const latencies = new Float64Array(cmd.subscribers * cmd.expectArtifacts);
  let nLat = 0;
  let attached = 0;
  let ended = 0;
  let events = 0;
  let lastReceiveAt = 0;
  let cpuAtAttach: NodeJS.CpuUsage | undefined;
  const subs: Sub[] = [];
  const origin = performance.timeOrigin;

  const finish = () => {
    const cpu = process.cpuUsage(cpuAtAttach);
    const codes: Record<string, number> = {};
    const contentHashes: Record<string, number> = {};
    let complete = 0;
    let outOfOrder = 0;
    let firstProblem: string | undefined;
    let firstErrorDetails: string | undefined;
    for (const [i, s] of subs.entries()) {
      const name = STATUS_NAME[s.code!] ?? String(s.code);
      codes[name] = (codes[name] ?? 0) + 1;
      if (!s.ordered) outOfOrder++;
      if (s.code !== status.OK) firstErrorDetails ??= s.details;
      const parts = s.artifactsById.get("out") ?? [];
      const hash = hashTexts(parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")));
      contentHashes[hash] = (contentHashes[hash] ?? 0) + 1;
      const ok = s.code === status.OK && s.ordered && s.firstIsTask && s.artifacts === cmd.expectArtifacts && s.lastWasCompleted;
      if (ok) complete++;
      else
        firstProblem ??= `stream ${i}: status ${name}, first event ${s.firstIsTask ? "task" : "not a task"}, ${s.artifacts}/${cmd.expectArtifacts} chunks${s.ordered ? "" : " out of order"}, ${s.lastWasCompleted ? "" : "no "}final COMPLETED`;
    }
    const counts = subs.map((s) => s.artifacts);
    const report: SubscriberReport = {
      complete,
      outOfOrder,
      codes,
      firstProblem,
      artifactsMin: Math.min(...counts),
      artifactsMax: Math.max(...counts),
      events,
      latenciesMs: latencies.slice(0, nLat),
      lastReceiveAt,
      cpuMicros: cpu.user + cpu.system,
      firstErrorDetails,
      contentHashes,
    };
    process.send!({ type: "done", ...report }, () => {
      for (const c of clients) c.close();
      process.exit(0);
    });
  };

  const onResponse = (sub: Sub, r: StreamResponse) => {
    events++;
    const now = origin + performance.now();
    lastReceiveAt = now;
    const p = r.payload;
    sub.lastWasCompleted = p?.$case === "statusUpdate" && p.value.status?.state === TASK_STATE_COMPLETED;
    if (sub.received++ === 0) {
      sub.firstIsTask = p?.$case === "task";
      if (p?.$case === "task") for (const a of p.value.artifacts) sub.artifactsById.set(a.artifactId, a.parts.slice());
      if (cmd.stall) sub.call.pause();
      if (++attached === cmd.subscribers) {
        cpuAtAttach = process.cpuUsage();
        process.send!({ type: "attached" });
      }
      return;
    }
    if (p?.$case !== "artifactUpdate" || p.value.artifact === undefined) return;
    const { artifact, append } = p.value;
    const held = sub.artifactsById.get(artifact.artifactId);
    if (append && held !== undefined) for (const part of artifact.parts) held.push(part);
    else sub.artifactsById.set(artifact.artifactId, artifact.parts.slice());
    for (const part of artifact.parts) {
      sub.artifacts++;
      const m = part.content?.$case === "text" ? MARKER.exec(part.content.value) : null;
      if (m === null) {
        sub.ordered = false;
        continue;
      }
      if (Number(m[1]) !== sub.next) sub.ordered = false;
      sub.next = Number(m[1]) + 1;
      if (nLat < latencies.length) latencies[nLat++] = now - Number(m[2]);
    }
  };

  const md = new Metadata();
  for (const [k, v] of Object.entries(cmd.metadata)) md.set(k, v);
  for (let i = 0; i < cmd.subscribers; i++) {
    const call = clients[i % clients.length]!.subscribeToTask(request, md);
    const sub: Sub = {
      call,
      received: 0,
      artifacts: 0,
      next: 0,
      ordered: true,
      firstIsTask: false,
      lastWasCompleted: false,
      artifactsById: new Map(),
    };
    subs.push(sub);
    call.on("data", (r: StreamResponse) => onResponse(sub, r));
    // A stream is over once grpc-js gave its status and, when OK, every message before it ('end').
    let statusSeen = false;
    let endSeen = false;
    const maybeEnd = () => {
      if (!statusSeen || (sub.code === status.OK && !endSeen)) return;
      if (++ended === cmd.subscribers) finish();
    };
    call.on("error", () => undefined);
    call.on("end", () => {
      endSeen = true;
      maybeEnd();
    });
    call.on("status", (st: { code: number; details: string }) => {
      if (statusSeen) return;
      statusSeen = true;
      sub.code = st.code;
      sub.details = st.details;
      maybeEnd();
    });
  }
  process.on("message", (msg: { cmd?: string }) => {
    if (msg?.cmd !== "resume") return;
    for (const s of subs) s.call.resume();
  });
}

process.once("message", (msg: StartCommand) => start(msg));
