/**
 * A process of stream subscribers, forked by subscribers.ts (IPC with "advanced" serialization).
 * It opens `subscribers` server streams (e.g. SubscribeToTask) spread over `connections`
 * HTTP/2 connections and keeps them cheap: it speaks gRPC over `node:http2` itself (no grpc-js:
 * its per-message machinery cost the client ~10 µs per event, which on 2 shared cores competes
 * with the server being measured), splits the length-prefixed messages in place and copies only
 * a message that spans DATA chunks. The only parsing is what checks order and latency: the
 * StreamResponse oneof tag (first byte) and, in an artifact update, the marker
 * `#seq=<n>;t=<ms>;` that the bench agent writes into the artifact's text
 * (t = performance.timeOrigin + performance.now() when it published).
 *
 *   parent -> { cmd: "start", ...StartCommand }   child -> { type: "attached" } (every stream got its first event)
 *   parent -> { cmd: "resume" } (stalled mode)    child -> { type: "done", ...SubscriberReport } (every stream ended)
 */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { connect as tcpConnect } from "node:net";

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
  /** grpc-js subscribers only: hash of the rebuilt artifact `out` -> streams that ended with it. */
  readonly contentHashes?: Record<string, number>;
}

/** gRPC status code names, indexed by code. */
const STATUS = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;
const OK = 0;
const CANCELLED = 1;
const UNKNOWN = 2;
const UNAVAILABLE = 14;

/** StreamResponse field tags (field number << 3 | length-delimited). */
const TAG_TASK = 0x0a;
const TAG_STATUS = 0x1a;
const TAG_ARTIFACT = 0x22;
const MARK = Buffer.from("#seq=");

/**
 * What grpc-js's client asks of a connection (its defaults: Node's): stream and connection
 * windows of 64 KiB - 1 and 16 KiB frames. Not enlarged, so that a stalled stream pushes back
 * on the server as soon as it would with grpc-js.
 */
const SETTINGS = { initialWindowSize: 65_535, maxFrameSize: 16_384, enablePush: false };

/** A connection as grpc-js opens one: TCP without Nagle, no cap on the session's buffered memory. */
function openSession(address: string): ClientHttp2Session {
  const url = new URL(`http://${address}`);
  const session = connect(url, {
    settings: SETTINGS,
    maxSessionMemory: Number.MAX_SAFE_INTEGER,
    createConnection: () => tcpConnect({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port), noDelay: true }),
  });
  session.on("error", () => undefined); // its streams close and report UNAVAILABLE
  return session;
}

interface Sub {
  readonly stream: ClientHttp2Stream;
  received: number;
  artifacts: number;
  next: number;
  ordered: boolean;
  firstIsTask: boolean;
  lastTag: number;
  /** Message framing across DATA chunks: the 5-byte prefix being read, and a message that spans chunks. */
  readonly prefix: Buffer;
  prefixFill: number;
  partial?: Buffer;
  partialFill: number;
  /** Stalled: we stopped reading; unparsed bytes of the chunk we stopped in wait here. */
  paused: boolean;
  stash: Buffer[];
  /** Status from the response headers (trailers-only) or the trailers, and whether the stream has closed. */
  status?: number;
  message?: string;
  closed: boolean;
  code?: number;
  details?: string;
}

function readNumber(buf: Buffer, at: number, end: number): [value: number, end: number] {
  let v = 0;
  let i = at;
  for (; i < end; i++) {
    const c = buf[i]!;
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
  }
  return [v, i];
}

/** Status from a header block, if it has one; the message is percent-encoded on the wire. */
function statusOf(headers: IncomingHttpHeaders): { code: number; message?: string } | undefined {
  const raw = headers["grpc-status"];
  if (raw === undefined) return undefined;
  const code = Number(Array.isArray(raw) ? raw[0] : raw);
  const encoded = headers["grpc-message"];
  let message = Array.isArray(encoded) ? encoded[0] : encoded;
  if (message !== undefined) {
    try {
      message = decodeURIComponent(message);
    } catch {
      // not valid percent-encoding: keep it as sent
    }
  }
  return { code: Number.isInteger(code) ? code : UNKNOWN, message };
}

/** gRPC's mapping of an HTTP status without grpc-status (e.g. from a proxy). */
function httpStatusCode(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
      return 13; // INTERNAL
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 12; // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504:
      return UNAVAILABLE;
    default:
      return UNKNOWN;
  }
}

function start(cmd: StartCommand): void {
  const request = Buffer.alloc(5 + cmd.request.byteLength);
  request.writeUInt32BE(cmd.request.byteLength, 1); // byte 0: not compressed
  request.set(cmd.request, 5);
  const sessions: ClientHttp2Session[] = Array.from({ length: cmd.connections }, () => openSession(cmd.address));
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
      const name = STATUS[s.code!] ?? String(s.code);
      codes[name] = (codes[name] ?? 0) + 1;
      if (!s.ordered) outOfOrder++;
      if (s.code !== OK) firstErrorDetails ??= s.details;
      const ok = s.code === OK && s.ordered && s.firstIsTask && s.artifacts === cmd.expectArtifacts && s.lastTag === TAG_STATUS;
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
      for (const s of sessions) s.destroy();
      process.exit(0);
    });
  };

  /** One StreamResponse, buf[start, end). */
  const onMessage = (sub: Sub, buf: Buffer, start: number, end: number, now: number) => {
    events++;
    lastReceiveAt = now;
    const tag = start < end ? buf[start]! : 0;
    sub.lastTag = tag;
    if (sub.received++ === 0) {
      sub.firstIsTask = tag === TAG_TASK;
      if (cmd.stall) {
        // Never reads again until "resume": Node stops consuming the stream's DATA, so its
        // HTTP/2 window is not reopened and the server sees back-pressure.
        sub.paused = true;
        sub.stream.pause();
      }
      if (++attached === cmd.subscribers) {
        cpuAtAttach = process.cpuUsage();
        process.send!({ type: "attached" });
      }
      return;
    }
    if (tag !== TAG_ARTIFACT) return;
    // A merged update (A-32: a stream that could not write) carries several chunks, each with its marker.
    let at = buf.indexOf(MARK, start);
    if (at < 0 || at + MARK.length > end) {
      sub.artifacts++;
      sub.ordered = false;
      return;
    }
    while (at >= 0 && at + MARK.length <= end) {
      sub.artifacts++;
      const [seq, seqEnd] = readNumber(buf, at + MARK.length, end);
      // ";t=" then integer ms "." fraction
      const [whole, dot] = readNumber(buf, seqEnd + 3, end);
      const [frac, fracEnd] = readNumber(buf, dot + 1, end);
      const stamp = whole + frac / 10 ** (fracEnd - dot - 1);
      if (seq !== sub.next) sub.ordered = false;
      sub.next = seq + 1;
      if (nLat < latencies.length) latencies[nLat++] = now - stamp;
      at = buf.indexOf(MARK, fracEnd);
    }
  };

  /** Splits a DATA chunk into messages; a message within the chunk is read in place. */
  const feed = (sub: Sub, chunk: Buffer) => {
    if (sub.paused) {
      sub.stash.push(chunk);
      return;
    }
    const now = origin + performance.now();
    const n = chunk.length;
    let off = 0;
    while (off < n) {
      if (sub.partial !== undefined) {
        const want = sub.partial.length - sub.partialFill;
        const take = Math.min(want, n - off);
        chunk.copy(sub.partial, sub.partialFill, off, off + take);
        sub.partialFill += take;
        off += take;
        if (sub.partialFill < sub.partial.length) return;
        const msg = sub.partial;
        sub.partial = undefined;
        onMessage(sub, msg, 0, msg.length, now);
      } else {
        let len: number;
        if (sub.prefixFill === 0 && n - off >= 5) {
          len = chunk.readUInt32BE(off + 1);
          off += 5;
        } else {
          // The prefix itself spans chunks.
          while (sub.prefixFill < 5 && off < n) sub.prefix[sub.prefixFill++] = chunk[off++]!;
          if (sub.prefixFill < 5) return;
          sub.prefixFill = 0;
          len = sub.prefix.readUInt32BE(1);
        }
        if (len <= n - off) {
          onMessage(sub, chunk, off, off + len, now);
          off += len;
        } else {
          sub.partial = Buffer.allocUnsafe(len);
          sub.partialFill = 0;
        }
      }
      if (sub.paused) {
        if (off < n) sub.stash.push(chunk.subarray(off));
        return;
      }
    }
  };

  /** Counts a stream as ended once it has closed and every byte it got has been read. */
  const maybeEnd = (sub: Sub) => {
    if (!sub.closed || sub.paused || sub.code !== undefined) return;
    if (sub.status !== undefined) {
      sub.code = sub.status;
      sub.details = sub.message;
    } else {
      const rst = sub.stream.rstCode;
      sub.code = rst === constants.NGHTTP2_CANCEL ? CANCELLED : UNAVAILABLE;
      sub.details = `stream closed without a status (RST_STREAM code ${rst ?? "none"})`;
    }
    if (++ended === cmd.subscribers) finish();
  };

  const headers: Record<string, string> = {
    ...cmd.metadata,
    [constants.HTTP2_HEADER_METHOD]: "POST",
    [constants.HTTP2_HEADER_PATH]: cmd.path,
    "content-type": "application/grpc",
    te: "trailers",
  };
  for (let i = 0; i < cmd.subscribers; i++) {
    const stream = sessions[i % sessions.length]!.request(headers);
    const sub: Sub = {
      stream,
      received: 0,
      artifacts: 0,
      next: 0,
      ordered: true,
      firstIsTask: false,
      lastTag: 0,
      prefix: Buffer.alloc(5),
      prefixFill: 0,
      partialFill: 0,
      paused: false,
      stash: [],
      closed: false,
    };
    subs.push(sub);
    stream.on("response", (h) => {
      const st = statusOf(h); // trailers-only response
      if (st !== undefined) {
        sub.status = st.code;
        sub.message = st.message;
      } else {
        const httpStatus = Number(h[constants.HTTP2_HEADER_STATUS]);
        if (httpStatus !== 200) {
          sub.status = httpStatusCode(httpStatus);
          sub.message = `HTTP status ${httpStatus}`;
        }
      }
    });
    stream.on("trailers", (h) => {
      const st = statusOf(h);
      sub.status = st?.code ?? sub.status ?? UNKNOWN;
      sub.message = st?.message ?? sub.message ?? "trailers without grpc-status";
    });
    stream.on("data", (chunk: Buffer) => feed(sub, chunk));
    stream.on("error", () => undefined); // "close" follows and tells how it ended
    stream.on("close", () => {
      sub.closed = true;
      maybeEnd(sub);
    });
    stream.end(request);
  }
  process.on("message", (msg: { cmd?: string }) => {
    if (msg?.cmd !== "resume") return;
    for (const s of subs) {
      if (!s.paused) continue;
      s.paused = false;
      const stash = s.stash;
      s.stash = [];
      for (const chunk of stash) feed(s, chunk);
      s.stream.resume();
      maybeEnd(s);
    }
  });
}

process.once("message", (msg: StartCommand) => start(msg));
