/**
 * A process of stream subscribers, forked by subscribers.ts (IPC with "advanced" serialization).
 * It opens `subscribers` server streams (e.g. SubscribeToTask) spread over `connections`
 * HTTP/2 connections and keeps them cheap: responses stay bytes (identity deserializer). The
 * only parsing is what checks order and latency: the StreamResponse oneof tag (first byte)
 * and, in an artifact update, the marker `#seq=<n>;t=<ms>;` that the bench agent writes into
 * the artifact's text (t = performance.timeOrigin + performance.now() when it published).
 *
 *   parent -> { cmd: "start", ...StartCommand }   child -> { type: "attached", cpu } (every stream got its first event)
 *   parent -> { cmd: "resume" } (stalled mode)    child -> { type: "done", ...SubscriberReport } (every stream ended)
 */
import { Client, credentials, Metadata, status, type ClientReadableStream } from "@grpc/grpc-js";

export interface StartCommand {
  readonly cmd: "start";
  readonly address: string;
  readonly path: string;
  readonly request: Uint8Array;
  readonly metadata: Record<string, string>;
  readonly subscribers: number;
  readonly connections: number;
  /** Artifact updates each stream should get, numbered from 0. */
  readonly expectArtifacts: number;
  /** Stop reading after the first event, until told to resume. */
  readonly stall: boolean;
}

export interface SubscriberReport {
  /** Streams that began with the task, got every artifact update 0..n-1 in order, then a status update, and ended OK. */
  readonly complete: number;
  /** Streams whose artifact updates came out of order or with gaps. */
  readonly outOfOrder: number;
  /** Status code name -> streams that ended with it. */
  readonly codes: Record<string, number>;
  readonly firstProblem?: string;
  /** Artifact updates received per stream: min / max. */
  readonly artifactsMin: number;
  readonly artifactsMax: number;
  /** All events received (any kind), all streams. */
  readonly events: number;
  /** Publish-to-receive delay of every artifact update received, ms. */
  readonly latenciesMs: Float64Array;
  /** Epoch ms (timeOrigin + now) of the last event received. */
  readonly lastReceiveAt: number;
  /** This process's CPU µs from "attached" to "done". */
  readonly cpuMicros: number;
  /** Details of the first non-OK status. */
  readonly firstErrorDetails?: string;
}

/** StreamResponse field tags (field number << 3 | length-delimited). */
const TAG_TASK = 0x0a;
const TAG_STATUS = 0x1a;
const TAG_ARTIFACT = 0x22;
const MARK = Buffer.from("#seq=");
const identity = (b: Buffer): Buffer => b;

interface Sub {
  call?: ClientReadableStream<Buffer>;
  received: number;
  artifacts: number;
  next: number;
  ordered: boolean;
  firstIsTask: boolean;
  lastTag: number;
  code?: number;
  details?: string;
}

function readNumber(buf: Buffer, at: number): [value: number, end: number] {
  let v = 0;
  let i = at;
  for (; i < buf.length; i++) {
    const c = buf[i]!;
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return [v, i];
}

function start(cmd: StartCommand): void {
  const request = Buffer.from(cmd.request.buffer, cmd.request.byteOffset, cmd.request.byteLength);
  const md = new Metadata();
  for (const [k, v] of Object.entries(cmd.metadata)) md.set(k, v);
  // A local subchannel pool per client: each gets its own HTTP/2 connection.
  const clients = Array.from({ length: cmd.connections }, () =>
    new Client(cmd.address, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1, "grpc.max_receive_message_length": 64 * 1024 * 1024 }),
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
    let complete = 0;
    let outOfOrder = 0;
    let firstProblem: string | undefined;
    let firstErrorDetails: string | undefined;
    for (const [i, s] of subs.entries()) {
      const name = status[s.code!] ?? String(s.code);
      codes[name] = (codes[name] ?? 0) + 1;
      if (!s.ordered) outOfOrder++;
      if (s.code !== status.OK) firstErrorDetails ??= s.details;
      const ok = s.code === status.OK && s.ordered && s.firstIsTask && s.artifacts === cmd.expectArtifacts && s.lastTag === TAG_STATUS;
      if (ok) complete++;
      else
        firstProblem ??= `stream ${i}: status ${name}, first event ${s.firstIsTask ? "task" : "not a task"}, ${s.artifacts}/${cmd.expectArtifacts} artifact updates${s.ordered ? "" : " out of order"}, last event tag 0x${s.lastTag.toString(16)}`;
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
    };
    process.send!({ type: "done", ...report }, () => {
      for (const c of clients) c.close();
      process.exit(0);
    });
  };

  for (let i = 0; i < cmd.subscribers; i++) {
    const sub: Sub = { received: 0, artifacts: 0, next: 0, ordered: true, firstIsTask: false, lastTag: 0 };
    subs.push(sub);
    const call = clients[i % clients.length]!.makeServerStreamRequest(cmd.path, identity, identity, request, md.clone());
    sub.call = call;
    call.on("data", (buf: Buffer) => {
      const now = origin + performance.now();
      events++;
      lastReceiveAt = now;
      const tag = buf[0]!;
      sub.lastTag = tag;
      if (sub.received++ === 0) {
        sub.firstIsTask = tag === TAG_TASK;
        if (cmd.stall) call.pause(); // never reads again until "resume": its HTTP/2 window is not reopened
        if (++attached === cmd.subscribers) {
          cpuAtAttach = process.cpuUsage();
          process.send!({ type: "attached" });
        }
        return;
      }
      if (tag !== TAG_ARTIFACT) return;
      sub.artifacts++;
      const at = buf.indexOf(MARK);
      if (at < 0) {
        sub.ordered = false;
        return;
      }
      const [seq, seqEnd] = readNumber(buf, at + MARK.length);
      // ";t=" then integer ms "." fraction
      const [whole, dot] = readNumber(buf, seqEnd + 3);
      const [frac, fracEnd] = readNumber(buf, dot + 1);
      const stamp = whole + frac / 10 ** (fracEnd - dot - 1);
      if (seq !== sub.next) sub.ordered = false;
      sub.next = seq + 1;
      if (nLat < latencies.length) latencies[nLat++] = now - stamp;
    });
    call.on("error", () => undefined); // the status event below has the code
    call.on("status", (st) => {
      if (sub.code !== undefined) return;
      sub.code = st.code;
      sub.details = st.details;
      if (++ended === cmd.subscribers) finish();
    });
  }
  process.on("message", (msg: { cmd?: string }) => {
    if (msg?.cmd === "resume") for (const s of subs) s.call?.resume();
  });
}

process.once("message", (msg: StartCommand) => start(msg));
