/**
 * The hostile-input suite's engine (issue #18, A-34, R-SEC-5): seeded cases over all 11 A2A RPCs,
 * sent through a raw grpc-js client so that the bytes can be anything: valid requests with
 * hostile field values, random and mutated bytes, and hostile metadata (huge, repeated and
 * malformed a2a-version, a2a-extensions, authorization; forged and expired tokens).
 *
 * Each case must end with a status (or, for a stream, an event or a status) within its deadline
 * (else a hang); no status may be INTERNAL (our own code failing) or UNKNOWN; and after every
 * batch a plain call on every connection used must still succeed (else a wedged connection).
 * Loopback only: the target is always a server this process started on 127.0.0.1.
 *
 * Two things the HTTP/2 layer does before any code of ours runs, measured and so classified
 * (measured in the long run, `npm run bench -- hostile`):
 * - A header field longer than 64 KiB once HPACK-encoded is a decoding error of nghttp2 (its
 *   per-field cap, NGHTTP2_HD_MAX_NV): the server's HTTP/2 session answers GOAWAY
 *   COMPRESSION_ERROR and every stream on that connection ends with "RST_STREAM code 9".
 * - A header block longer than one HEADERS and 8 CONTINUATION frames (9 x 16 KiB, nghttp2's
 *   CONTINUATION-flood limit since CVE-2024-28182) ends the session with GOAWAY INTERNAL_ERROR:
 *   every stream on the connection ends with "RST_STREAM code 2".
 *   Cases with a header that long therefore run on a connection of their own, as a hostile
 *   client's would, and count as `headerRefused`; a reset anywhere else counts as `transportResets`.
 * - Deadlines grow with the request body (DEADLINE_PER_MIB_MS): a 1.5 MB body on a loaded
 *   machine can take seconds to cross 64 KiB flow-control windows, be decoded and answered.
 */
import * as grpc from "@grpc/grpc-js";
import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  Role,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from "../../gen/ts-proto/lf/a2a/v1/a2a.js";

export const RPCS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "GetExtendedAgentCard",
  "DeleteTaskPushNotificationConfig",
] as const;
type Rpc = (typeof RPCS)[number];
const STREAMING: ReadonlySet<Rpc> = new Set(["SendStreamingMessage", "SubscribeToTask"]);

/** Credentials the suite may use; `valid` is sent on the probe calls. */
export interface HostileCredentials {
  /** Metadata entries of a caller the server accepts (empty when auth is off). */
  readonly valid: Readonly<Record<string, string>>;
  /** Credentials that must be refused (forged, expired, wrong audience...), as metadata entries. */
  readonly refused: ReadonlyArray<Readonly<Record<string, string>>>;
  /** Every case carries `valid` (issue 33: admission refuses the rest before their request is read, so their bytes would test nothing). */
  readonly onEveryCase?: boolean;
}

export interface HostileOptions {
  readonly target: string;
  readonly seed: number;
  readonly cases: number;
  readonly credentials: HostileCredentials;
  /** Task ids that exist (some of another principal), so cases reach real lookups. */
  readonly taskIds: readonly string[];
  /** Cases in flight at once. */
  readonly inFlight?: number;
  /** Connections the cases are spread over. */
  readonly connections?: number;
  /** Deadline of each case, ms. */
  readonly deadlineMs?: number;
  /** Called after every batch of 1,000 cases with the figures so far (long runs report progress). */
  readonly onProgress?: (done: number, report: HostileReport) => void;
  /** Told of every case as it ends (diagnosis: which cases fail how). */
  readonly onCase?: (record: CaseRecord) => void;
}

/** One case as it ended. */
export interface CaseRecord {
  readonly rpc: string;
  readonly connection: number;
  readonly metadataBytes: number;
  /** The longest header field the client puts on the wire (repeated keys go out as separate fields). */
  readonly largestHeaderBytes: number;
  readonly bodyBytes: number;
  /** Sent on a connection of its own (a header field or block over HEADER_FIELD_RISK_BYTES / HEADER_BLOCK_RISK_BYTES). */
  readonly isolated: boolean;
  readonly code: number | "hang" | "data";
  readonly details: string | undefined;
  readonly startedMs: number;
  readonly ms: number;
}

export interface HostileReport {
  readonly cases: number;
  readonly byCode: Record<string, number>;
  readonly hangs: number;
  /** Probe calls that failed after a batch: a connection that no longer serves. */
  readonly wedged: number;
  /** INTERNAL or UNKNOWN statuses from the server's code, with a sample of their details. */
  readonly internal: number;
  /** Cases with a header field or block over nghttp2's caps whose own connection the server's HTTP/2 layer closed (GOAWAY). */
  readonly headerRefused: number;
  /** Other streams reset by the HTTP/2 layer (the client calls them INTERNAL "Received RST_STREAM"); 0 expected. */
  readonly transportResets: number;
  /** Cases that ended DEADLINE_EXCEEDED, and a sample of them (rpc, body and largest header size). */
  readonly deadlineExceeded: number;
  readonly deadlineSamples: string[];
  readonly internalSamples: string[];
  readonly ms: number;
}

/**
 * Raw sizes above which a header field may pass nghttp2's 64 KiB field cap, and a header block its
 * 9 x 16 KiB frame limit, once HPACK-encoded (the encoder takes Huffman only when it is shorter,
 * so encoded is at most raw plus a few bytes per field).
 */
export const HEADER_FIELD_RISK_BYTES = 60 * 1024;
export const HEADER_BLOCK_RISK_BYTES = 128 * 1024;
/** Each case's deadline grows by this much per MiB of request body. */
export const DEADLINE_PER_MIB_MS = 4000;

/** The longest single header field the client sends (repeated keys go out as separate fields), and all of them together. */
export function headerSizes(md: grpc.Metadata): { largest: number; total: number } {
  let largest = 0;
  let total = 0;
  for (const [key, value] of Object.entries(md.toHttp2Headers())) {
    for (const one of Array.isArray(value) ? value : [value]) {
      largest = Math.max(largest, key.length, String(one).length);
      total += key.length + String(one).length;
    }
  }
  return { largest, total };
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Cases {
  constructor(
    private readonly random: () => number,
    private readonly taskIds: readonly string[],
  ) {}
  int(n: number): number {
    return Math.floor(this.random() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.random() < p;
  }

  string(): string {
    return this.pick([
      () => "",
      () => "x",
      () => "x".repeat(this.pick([255, 256, 257, 5000, 100_000])),
      () => "\u0000\n\r\t\u007f",
      () => "é🎉\u202e",
      () => "\ud800", // a lone surrogate
      () => "../../etc/passwd",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a format string and a template placeholder are hostile input, on purpose
      () => "%s%n${x}<script>",
      () => this.pick(this.taskIds.length > 0 ? this.taskIds : ["none"]),
      () => "t".repeat(this.int(64)),
    ])();
  }
  number(): number {
    return this.pick([0, 1, -1, 50, 100, 101, 2 ** 31 - 1, -(2 ** 31), 7]);
  }
  id(): string {
    return this.chance(0.5) ? this.pick(this.taskIds.length > 0 ? this.taskIds : [""]) : this.string();
  }

  part(): Record<string, unknown> {
    const kind = this.int(6);
    const base = {
      filename: this.chance(0.2) ? this.string() : "",
      mediaType: this.pick(["", "text/plain", "application/json", "image/png", "x", this.string()]),
    };
    if (kind === 0) return { ...base, content: undefined };
    if (kind === 1) return { ...base, content: { $case: "text", value: this.pick(["echo", "hi", this.string()]) } };
    if (kind === 2)
      return { ...base, content: { $case: "url", value: this.pick(["https://example.com/a", "http://127.0.0.1/x", "not a url", this.string()]) } };
    if (kind === 3) return { ...base, content: { $case: "raw", value: Buffer.alloc(this.pick([0, 1, 1000])) } };
    if (kind === 4) return { ...base, content: { $case: "data", value: this.deepValue(this.pick([1, 5, 50])) } };
    return { ...base, content: { $case: "text", value: "" } };
  }
  deepValue(depth: number): unknown {
    let v: unknown = this.pick([1, "s", true, null]);
    for (let i = 0; i < depth; i++) v = this.chance(0.5) ? { k: v } : [v];
    return v;
  }
  message(): Record<string, unknown> {
    const partCount = this.pick([0, 1, 1, 2, 50, 10_000]);
    const parts =
      partCount === 10_000 ? Array.from({ length: partCount }, () => ({ content: undefined })) : Array.from({ length: partCount }, () => this.part());
    return {
      messageId: this.chance(0.8) ? `m-${this.int(1e9)}` : this.string(),
      contextId: this.chance(0.7) ? "" : this.string(),
      taskId: this.chance(0.6) ? "" : this.id(),
      role: this.pick([Role.ROLE_USER, Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_UNSPECIFIED, 99 as Role]),
      parts,
      extensions: this.chance(0.1) ? [this.string()] : [],
      referenceTaskIds: this.chance(0.2) ? Array.from({ length: this.pick([1, 3, 65, 1000]) }, () => this.id()) : [],
      metadata: this.chance(0.1) ? { deep: this.deepValue(this.pick([1, 30, 90])) } : undefined,
    };
  }
  /** A request of `rpc` with hostile field values, encoded. */
  request(rpc: Rpc): Uint8Array {
    const tenant = this.chance(0.8) ? "" : this.string();
    switch (rpc) {
      case "SendMessage":
      case "SendStreamingMessage":
        return SendMessageRequest.encode(
          SendMessageRequest.fromPartial({
            tenant,
            message: this.chance(0.95) ? (this.message() as never) : undefined,
            configuration: this.chance(0.5)
              ? {
                  acceptedOutputModes: this.chance(0.3) ? [this.string()] : [],
                  historyLength: this.chance(0.5) ? this.number() : undefined,
                  returnImmediately: this.chance(0.7),
                  taskPushNotificationConfig: this.chance(0.1) ? { url: this.string(), id: "", taskId: "", token: "", tenant: "" } : undefined,
                }
              : undefined,
          }),
        ).finish();
      case "GetTask":
        return GetTaskRequest.encode(
          GetTaskRequest.fromPartial({ tenant, id: this.id(), historyLength: this.chance(0.5) ? this.number() : undefined }),
        ).finish();
      case "ListTasks":
        return ListTasksRequest.encode(
          ListTasksRequest.fromPartial({
            tenant,
            contextId: this.chance(0.7) ? "" : this.string(),
            status: this.pick([0, 1, 3, 99]) as never,
            pageSize: this.chance(0.5) ? this.number() : undefined,
            pageToken: this.chance(0.7) ? "" : this.string(),
            historyLength: this.chance(0.5) ? this.number() : undefined,
            includeArtifacts: this.chance(0.5),
          }),
        ).finish();
      case "CancelTask":
        return CancelTaskRequest.encode(CancelTaskRequest.fromPartial({ tenant, id: this.id() })).finish();
      case "SubscribeToTask":
        return SubscribeToTaskRequest.encode(SubscribeToTaskRequest.fromPartial({ tenant, id: this.id() })).finish();
      case "CreateTaskPushNotificationConfig":
        return TaskPushNotificationConfig.encode(
          TaskPushNotificationConfig.fromPartial({
            tenant,
            id: this.string(),
            taskId: this.id(),
            url: this.pick(["https://example.com/hook", "http://127.0.0.1:1/x", this.string()]),
            token: this.string(),
          }),
        ).finish();
      case "GetTaskPushNotificationConfig":
        return GetTaskPushNotificationConfigRequest.encode(
          GetTaskPushNotificationConfigRequest.fromPartial({ tenant, taskId: this.id(), id: this.string() }),
        ).finish();
      case "ListTaskPushNotificationConfigs":
        return ListTaskPushNotificationConfigsRequest.encode(
          ListTaskPushNotificationConfigsRequest.fromPartial({ tenant, taskId: this.id(), pageSize: this.number(), pageToken: this.string() }),
        ).finish();
      case "GetExtendedAgentCard":
        return GetExtendedAgentCardRequest.encode(GetExtendedAgentCardRequest.fromPartial({ tenant })).finish();
      case "DeleteTaskPushNotificationConfig":
        return DeleteTaskPushNotificationConfigRequest.encode(
          DeleteTaskPushNotificationConfigRequest.fromPartial({ tenant, taskId: this.id(), id: this.string() }),
        ).finish();
    }
  }
  /** The body: a hostile request, random bytes, or a mutated request. */
  body(rpc: Rpc): Buffer {
    const kind = this.int(10);
    if (kind === 0) return Buffer.from(Array.from({ length: this.pick([0, 1, 7, 300, 5000]) }, () => this.int(256)));
    const bytes = Buffer.from(this.request(rpc));
    if (kind === 1 && bytes.length > 0) return bytes.subarray(0, this.int(bytes.length)); // truncated
    if (kind === 2 && bytes.length > 0) {
      const copy = Buffer.from(bytes);
      for (let i = 0; i < 1 + this.int(8); i++) copy[this.int(copy.length)] = this.int(256); // flipped bytes
      return copy;
    }
    if (kind === 3) return Buffer.concat([bytes, Buffer.from([this.int(256), this.int(256), 0xff, 0xff, 0xff, 0xff, 0x0f])]); // trailing junk, a huge length
    return bytes;
  }
  /** Metadata: hostile service parameters and credentials over (usually) a valid base. */
  metadata(credentials: HostileCredentials): grpc.Metadata {
    const md = new grpc.Metadata();
    const version = this.int(12);
    if (version < 7) md.set("a2a-version", "1.0");
    else if (version === 7) md.set("a2a-version", "9".repeat(this.pick([100, 8_000, 60 * 1024])));
    else if (version === 8) {
      // Counted once: a pick in the loop's condition would be drawn again at every turn and rarely reach 500.
      const repeats = this.pick([2, 50, 500]);
      for (let i = 0; i < repeats; i++) md.add("a2a-version", this.pick(["1.0", "0.3", "x", ","]));
    } else if (version === 9) setLoose(md, "a2a-version", this.pick(["", " ", "1", "1.0.0.0", "01.00", "-1.0", "1.0,1.0", "1.0 ; q=1", "\u007f"]));
    // version 10, 11: none at all
    if (this.chance(0.15)) {
      const ext = this.pick([() => "https://example.com/ext", () => "x".repeat(30_000), () => ",,,,", () => this.string()])();
      const repeats = this.pick([1, 1, 100]);
      for (let i = 0; i < repeats; i++) md.add("a2a-extensions", ext.replace(/[^\x20-\x7e]/g, "?"));
    }
    const cred = credentials.onEveryCase ? 0 : this.int(10);
    if (cred < 6) for (const [k, v] of Object.entries(credentials.valid)) md.set(k, v);
    else if (cred === 6 && credentials.refused.length > 0) for (const [k, v] of Object.entries(this.pick(credentials.refused))) md.set(k, v);
    else if (cred === 7)
      md.set("authorization", this.pick(["Bearer", "Bearer ", "bearer a.b.c", "Basic x", `Bearer ${"a".repeat(20_000)}`, "Bearer eyJhbGciOiJub25lIn0.e30."]));
    else if (cred === 8) {
      // Node's HTTP/2 client refuses two authorization entries itself; one entry holding two is what can arrive.
      md.set("authorization", "Bearer a.b.c, Bearer d.e.f");
      md.set("x-api-key", this.pick(["", "a2a_x", "k".repeat(600)]));
    }
    if (this.chance(0.05)) md.set("x-junk-bin", Buffer.alloc(this.pick([1, 2000])));
    return md;
  }
}

/** grpc-js's client refuses some values itself (non-printable ASCII): those cases send nothing instead. */
function setLoose(md: grpc.Metadata, key: string, value: string): void {
  try {
    md.set(key, value);
  } catch {
    // not sendable by a conforming client
  }
}

interface Outcome {
  readonly code: number | "hang" | "data";
  readonly details?: string;
}

const identity = (b: Buffer) => b;

function runCase(client: grpc.Client, rpc: Rpc, body: Buffer, md: grpc.Metadata, deadlineMs: number): Promise<Outcome> {
  const path = `/lf.a2a.v1.A2AService/${rpc}`;
  const deadline = Date.now() + deadlineMs;
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    // A margin over the deadline: a server that answers DEADLINE_EXCEEDED itself is fine; silence is a hang.
    const timer = setTimeout(() => finish({ code: "hang" }), deadlineMs + 2000);
    if (STREAMING.has(rpc)) {
      const call = client.makeServerStreamRequest(path, identity, identity, body, md, { deadline });
      call.on("data", () => {
        // An event arrived: the stream works. Streams on interrupted tasks stay open by design; end it here.
        call.cancel();
        finish({ code: "data" });
      });
      call.on("error", (e: grpc.ServiceError) => finish({ code: e.code, details: e.details }));
      call.on("end", () => finish({ code: grpc.status.OK }));
    } else {
      client.makeUnaryRequest(path, identity, identity, body, md, { deadline }, (e) =>
        finish(e ? { code: (e as grpc.ServiceError).code, details: (e as grpc.ServiceError).details } : { code: grpc.status.OK }),
      );
    }
  });
}

/** A plain ListTasks with valid credentials: does the connection still serve? */
function probe(client: grpc.Client, credentials: HostileCredentials): Promise<boolean> {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  for (const [k, v] of Object.entries(credentials.valid)) md.set(k, v);
  const body = Buffer.from(ListTasksRequest.encode(ListTasksRequest.fromPartial({ pageSize: 1 })).finish());
  return runCase(client, "ListTasks", body, md, 5000).then((o) => o.code === grpc.status.OK);
}

/** Runs the suite against `target`; the report says what happened to every case. */
export async function runHostile(options: HostileOptions): Promise<HostileReport> {
  const started = performance.now();
  const random = seededRandom(options.seed);
  const cases = new Cases(random, options.taskIds);
  const inFlight = options.inFlight ?? 16;
  const deadlineMs = options.deadlineMs ?? 5000;
  const clientOptions = { "grpc.max_receive_message_length": 64 * 1024 * 1024, "grpc.max_metadata_size": 256 * 1024 };
  const clients = Array.from(
    { length: options.connections ?? 4 },
    (_, i) => new grpc.Client(options.target, grpc.credentials.createInsecure(), { ...clientOptions, "grpc.channel_id": i } as grpc.ChannelOptions),
  );
  const byCode: Record<string, number> = {};
  let hangs = 0;
  let wedged = 0;
  let internal = 0;
  let transportResets = 0;
  let headerRefused = 0;
  let deadlineExceeded = 0;
  const internalSamples: string[] = [];
  const deadlineSamples: string[] = [];
  let next = 0;
  try {
    while (next < options.cases) {
      const batch = Math.min(options.cases - next, 1000);
      let issued = 0;
      const worker = async () => {
        while (issued < batch) {
          issued++;
          const rpc = cases.pick(RPCS);
          const body = cases.body(rpc);
          const md = cases.metadata(options.credentials);
          const shared = cases.pick(clients);
          const { largest: largestHeaderBytes, total: headerBlockBytes } = headerSizes(md);
          // A header the server's HTTP/2 layer may refuse closes the whole connection: give it its own.
          const isolated = largestHeaderBytes > HEADER_FIELD_RISK_BYTES || headerBlockBytes > HEADER_BLOCK_RISK_BYTES;
          // A local subchannel pool: grpc-js would otherwise share the connection of a client with the same options.
          const client = isolated
            ? new grpc.Client(options.target, grpc.credentials.createInsecure(), {
                ...clientOptions,
                "grpc.use_local_subchannel_pool": 1,
              } as grpc.ChannelOptions)
            : shared;
          const startedMs = performance.now() - started;
          const caseDeadlineMs = deadlineMs + Math.ceil((body.length / 1048576) * DEADLINE_PER_MIB_MS);
          const outcome = await runCase(client, rpc, body, md, caseDeadlineMs);
          if (isolated) client.close();
          if (options.onCase) {
            options.onCase({
              rpc,
              connection: isolated ? -1 : clients.indexOf(shared),
              metadataBytes: headerBlockBytes,
              largestHeaderBytes,
              bodyBytes: body.length,
              isolated,
              code: outcome.code,
              details: outcome.details,
              startedMs,
              ms: performance.now() - started - startedMs,
            });
          }
          const name = typeof outcome.code === "number" ? (grpc.status[outcome.code] ?? String(outcome.code)) : outcome.code;
          byCode[name] = (byCode[name] ?? 0) + 1;
          if (outcome.code === "hang") hangs++;
          if (outcome.code === grpc.status.DEADLINE_EXCEEDED) {
            deadlineExceeded++;
            if (deadlineSamples.length < 10)
              deadlineSamples.push(`${rpc}: body ${Math.round(body.length / 1024)} KiB, largest header ${Math.round(largestHeaderBytes / 1024)} KiB`);
          }
          // The client reports a stream the server's HTTP/2 layer reset as INTERNAL "Received RST_STREAM"
          // (no code of ours ran): expected, on its own connection, for a header field over the HPACK cap.
          const reset = outcome.code === grpc.status.INTERNAL && /RST_STREAM|Session closed/.test(outcome.details ?? "");
          if (reset && isolated) {
            headerRefused++;
          } else if (reset) {
            transportResets++;
            if (internalSamples.length < 10) internalSamples.push(`${rpc} (reset): ${outcome.details?.slice(0, 200)}`);
          } else if (outcome.code === grpc.status.INTERNAL || outcome.code === grpc.status.UNKNOWN) {
            internal++;
            if (internalSamples.length < 10) internalSamples.push(`${rpc}: ${outcome.details?.slice(0, 200)}`);
          }
        }
      };
      await Promise.all(Array.from({ length: inFlight }, worker));
      next += batch;
      for (const client of clients) if (!(await probe(client, options.credentials))) wedged++;
      options.onProgress?.(next, {
        cases: next,
        byCode: { ...byCode },
        hangs,
        wedged,
        internal,
        headerRefused,
        transportResets,
        deadlineExceeded,
        deadlineSamples: [...deadlineSamples],
        internalSamples: [...internalSamples],
        ms: performance.now() - started,
      });
    }
  } finally {
    for (const client of clients) client.close();
  }
  return {
    cases: options.cases,
    byCode,
    hangs,
    wedged,
    internal,
    headerRefused,
    transportResets,
    deadlineExceeded,
    deadlineSamples,
    internalSamples,
    ms: performance.now() - started,
  };
}
