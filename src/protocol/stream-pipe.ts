import * as grpc from "@grpc/grpc-js";
import type { StreamResponse, TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { approximateSize } from "../codec/stream-response-encoder.js";
import type { RequestContext, StreamHandle } from "../lifecycle/task-service.js";
import type { StreamSink } from "../lifecycle/task-feed.js";
import { StreamBacklog, heartbeat, withCursor, eventWritten, streamEnded, streamOpened, type BacklogLimits, type StreamEndReason } from "../streams/index.js";
import { GrpcStatusError } from "./error-status.js";
import type { CallContext, StreamWriter } from "./grpc-adapter.js";
import { formatActivatedExtensions } from "./service-parameters.js";

/** The status a client gets when it reads too slowly; it says which limit it passed and what to do about it. */
export function slowClientError(limit: string): GrpcStatusError {
  return new GrpcStatusError(
    grpc.status.RESOURCE_EXHAUSTED,
    `the client fell too far behind the task (${limit}) and was disconnected; ` + "call SubscribeToTask to get a fresh snapshot and the events after it",
  );
}

export interface PipeOptions {
  readonly call: CallContext;
  readonly out: StreamWriter<StreamResponse>;
  readonly limits: BacklogLimits;
  /** Starts the core's stream into `sink`; resolves once its first event went out. */
  readonly open: (sink: StreamSink) => Promise<StreamHandle>;
  readonly rc: RequestContext;
  /**
   * Set when the client activated the stream-resume extension: every event carries its
   * cursor, and a stream silent for `heartbeatMs` (null: never) gets a heartbeat.
   */
  readonly resume?: { readonly heartbeatMs: number | null };
}

/**
 * Connects a core stream to a gRPC server stream with flow control. Writes go out while the
 * client keeps up. Once grpc-js reports back-pressure (write() returned false), what follows
 * waits in the stream's backlog (src/streams/stream-backlog.ts), merged without loss (A-32),
 * until 'drain'; the stream is ended with RESOURCE_EXHAUSTED only when that merged backlog passes
 * its byte or entry limit, or all streams' backlogs together pass the shared budget. The
 * publisher (and so every other subscriber) never waits for a slow client. A stream that has
 * delivered its closing event ends once its backlog has been written.
 *
 * A client that is gone (cancel, deadline, dropped connection, server shutdown) only closes
 * its own subscription, at once: also while `open` is still waiting for the agent's first
 * answer, so a call whose client is gone holds nothing until the agent gets round to answering.
 */
export async function pipeStream(options: PipeOptions): Promise<void> {
  const { call } = options;
  const pipe = new StreamPipe(options);
  const onAbort = () => pipe.clientGone();
  streamOpened();
  call.signal.addEventListener("abort", onAbort, { once: true });
  if (call.signal.aborted) onAbort();
  let handle: StreamHandle | undefined;
  let released = false;
  // Errors before the first event reject `opening`: they become the call's status (R-STREAM-1).
  const opening = options.open(pipe).then((opened) => {
    if (released) opened.close();
    else handle = opened;
  });
  try {
    await Promise.race([opening, pipe.finished]);
    await pipe.finished;
  } finally {
    released = true;
    call.signal.removeEventListener("abort", onAbort);
    handle?.close();
    pipe.release();
    opening.catch(() => undefined); // the client was gone first: nobody is waiting for this answer
  }
}

/**
 * One stream's sink: what pipeStream gives the core. Why a class and not closures made per
 * stream: the core calls `next` for every event, and V8 optimizes that call (and the writes it
 * inlines) for the function it saw; a closure per stream is a new function for every stream, so
 * the optimized event path was thrown away at each stream's first event and compiled again,
 * tens of ms of compiler CPU per stream (test/streaming/stream-call-targets.test.ts). Methods of a
 * class are the same functions for every stream.
 */
class StreamPipe implements StreamSink {
  readonly finished: Promise<void>;
  private reason: StreamEndReason = "done";
  private resolveFinished!: () => void;
  private rejectFinished!: (error: Error) => void;
  private ended = false;
  private readonly backlog: StreamBacklog;
  /** Bytes of this stream's backlog counted in the shared budget. */
  private accounted = 0;
  private blocked = false;
  /** The closing event has been queued: end once the backlog is written. */
  private ending = false;
  private first = true;
  /** Written since the heartbeat timer last looked (with resume on). */
  private active = true;
  /** What a heartbeat repeats: the task and its last status this stream carried. */
  private lastStatus: { taskId: string; contextId: string; status: TaskStatus } | undefined = undefined;
  private readonly heartbeats: NodeJS.Timeout | undefined;
  private readonly call: CallContext;
  private readonly out: StreamWriter<StreamResponse>;
  private readonly limits: BacklogLimits;
  private readonly rc: RequestContext;
  private readonly resume: { readonly heartbeatMs: number | null } | undefined;

  constructor(options: PipeOptions) {
    this.call = options.call;
    this.out = options.out;
    this.limits = options.limits;
    this.rc = options.rc;
    this.resume = options.resume;
    this.backlog = new StreamBacklog(options.limits.entryBytes);
    this.finished = new Promise<void>((resolve, reject) => {
      this.resolveFinished = resolve;
      this.rejectFinished = reject;
    });
    const heartbeatMs = options.resume?.heartbeatMs;
    this.heartbeats = heartbeatMs == null ? undefined : setInterval(() => this.beat(), heartbeatMs);
    this.heartbeats?.unref();
  }

  next(plain: StreamResponse, version?: number): void {
    if (this.ended || this.out.closed) return;
    let response = plain;
    if (this.resume !== undefined) {
      this.active = true;
      if (version !== undefined) response = withCursor(plain, version);
      this.lastStatus = statusOf(plain) ?? this.lastStatus;
    }
    if (this.first) this.opened(response);
    if (this.blocked) this.enqueue(response);
    else if (!this.write(response, 1)) this.block();
  }

  end(): void {
    if (this.blocked && this.backlog.size > 0) this.ending = true;
    else this.endStream();
  }

  fail(error: unknown): void {
    this.endStream(error instanceof Error ? error : new Error(String(error)));
  }

  /** The client is gone (cancel, deadline, dropped connection, shutdown). */
  clientGone(): void {
    if (!this.ended) this.reason = "client-gone";
    this.endStream();
  }

  /** The stream is over: give back what it held. */
  release(): void {
    if (this.heartbeats !== undefined) clearInterval(this.heartbeats);
    this.backlog.clear();
    this.limits.shared.adjust(-this.accounted);
    this.accounted = 0;
    streamEnded(this.reason);
  }

  /** The first response: headers leave with it, so the extensions used so far are known by now. */
  private opened(response: StreamResponse): void {
    this.first = false;
    if (this.rc.activatedExtensions.size > 0) this.call.setResponseHeader("a2a-extensions", formatActivatedExtensions([...this.rc.activatedExtensions]));
    if (response.payload.case === "task") this.call.setTaskId(response.payload.value.id);
  }

  private endStream(error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    if (error) this.rejectFinished(error);
    else this.resolveFinished();
  }

  private account(): boolean {
    if (!this.limits.shared.adjust(this.backlog.bytes - this.accounted)) return false;
    this.accounted = this.backlog.bytes;
    return true;
  }

  private cut(limit: string): void {
    this.reason = "budget";
    this.call.setLogField("slow_client", "true");
    this.endStream(slowClientError(limit));
  }

  private write(response: StreamResponse, events: number): boolean {
    const flowing = this.out.write(response);
    eventWritten(events > 1);
    return flowing;
  }

  private block(): void {
    this.blocked = true;
    void this.out.waitForDrain().then(() => this.flush());
  }

  private flush(): void {
    this.blocked = false;
    if (this.ended) return;
    const backlog = this.backlog;
    for (let item = backlog.shift(); item !== undefined; item = backlog.shift()) {
      if (!this.write(item.response, item.events)) {
        this.account();
        this.block();
        return;
      }
    }
    this.account();
    if (this.ending) this.endStream();
  }

  private enqueue(response: StreamResponse): void {
    const { backlog, limits } = this;
    backlog.push(response, approximateSize(response));
    if (backlog.bytes > limits.streamBytes) return this.cut(`its merged backlog passed ${limits.streamBytes} bytes`);
    if (backlog.size > limits.streamEntries) return this.cut(`its merged backlog passed ${limits.streamEntries} events`);
    if (!this.account()) this.cut("the server's budget for slow streams is spent");
  }

  private beat(): void {
    const { lastStatus } = this;
    if (!this.active && !this.blocked && !this.ended && !this.out.closed && lastStatus !== undefined) {
      if (!this.out.write(heartbeat(lastStatus.taskId, lastStatus.contextId, lastStatus.status))) this.block();
    }
    this.active = false;
  }
}

/** The task and status a response carries, if it carries a status (what a heartbeat repeats). */
function statusOf(response: StreamResponse): { taskId: string; contextId: string; status: TaskStatus } | undefined {
  const { payload } = response;
  if (payload.case === "task" && payload.value.status !== undefined)
    return { taskId: payload.value.id, contextId: payload.value.contextId, status: payload.value.status };
  if (payload.case === "statusUpdate" && payload.value.status !== undefined)
    return { taskId: payload.value.taskId, contextId: payload.value.contextId, status: payload.value.status };
  return undefined;
}
