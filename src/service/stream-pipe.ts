import type { StreamResponse, TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { watchCredential } from "../auth/credential-watch.js";
import { approximateSize } from "../codec/stream-response-encoder.js";
import type { RequestContext, StreamHandle, StreamSink } from "../lifecycle/index.js";
import { StreamBacklog, heartbeat, withCursor, eventWritten, streamEnded, streamOpened, type BacklogLimits, type StreamEndReason } from "../streams/index.js";
import { StatusError } from "./error-status.js";
import { Code } from "./status-code.js";
import type { CallContext, StreamWriter } from "./face.js";
import { formatActivatedExtensions } from "./service-parameters.js";

/** The status a client gets when it reads too slowly; it says which limit it passed and what to do about it. */
export function slowClientError(limit: string): StatusError {
  return new StatusError(
    Code.RESOURCE_EXHAUSTED,
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
 * Connects a core stream to a binding's server stream (gRPC, SSE) with flow control. Writes go out while the
 * client keeps up. Once the transport reports back-pressure (write() returned false), what follows
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
  const { call, out, limits, rc } = options;
  let reason: StreamEndReason = "done";
  let endStream!: (error?: Error) => void;
  let ended = false;
  const finished = new Promise<void>((resolve, reject) => {
    endStream = (error) => {
      if (ended) return;
      ended = true;
      if (error) reject(error);
      else resolve();
    };
  });
  const backlog = new StreamBacklog(limits.entryBytes);
  /** Bytes of this stream's backlog counted in the shared budget. */
  let accounted = 0;
  let blocked = false;
  /** The closing event has been queued: end once the backlog is written. */
  let ending = false;
  let first = true;

  const account = (): boolean => {
    if (!limits.shared.adjust(backlog.bytes - accounted)) return false;
    accounted = backlog.bytes;
    return true;
  };
  const cut = (limit: string) => {
    reason = "budget";
    call.setLogField("slow_client", "true");
    endStream(slowClientError(limit));
  };
  const write = (response: StreamResponse, events: number): boolean => {
    const flowing = out.write(response);
    eventWritten(events > 1);
    return flowing;
  };
  const block = () => {
    blocked = true;
    void out.waitForDrain().then(flush);
  };
  const flush = () => {
    blocked = false;
    if (ended) return;
    for (let item = backlog.shift(); item !== undefined; item = backlog.shift()) {
      if (!write(item.response, item.events)) {
        account();
        block();
        return;
      }
    }
    account();
    if (ending) endStream();
  };
  const enqueue = (response: StreamResponse) => {
    backlog.push(response, approximateSize(response));
    if (backlog.bytes > limits.streamBytes) return cut(`its merged backlog passed ${limits.streamBytes} bytes`);
    if (backlog.size > limits.streamEntries) return cut(`its merged backlog passed ${limits.streamEntries} events`);
    if (!account()) cut("the server's budget for slow streams is spent");
  };

  const resume = options.resume;
  /** Written since the heartbeat timer last looked (with resume on). */
  let active = true;
  /** What a heartbeat repeats: the task and its last status this stream carried. */
  let lastStatus: { taskId: string; contextId: string; status: TaskStatus } | undefined;
  const beat = () => {
    if (!active && !blocked && !ended && !out.closed && lastStatus !== undefined) {
      if (!out.write(heartbeat(lastStatus.taskId, lastStatus.contextId, lastStatus.status))) block();
    }
    active = false;
  };
  const heartbeats = resume?.heartbeatMs == null ? undefined : setInterval(beat, resume.heartbeatMs);
  heartbeats?.unref();

  const sink: StreamSink = {
    next(plain, version) {
      if (ended || out.closed) return;
      let response = plain;
      if (resume !== undefined) {
        active = true;
        if (version !== undefined) response = withCursor(plain, version);
        lastStatus = statusOf(plain) ?? lastStatus;
      }
      if (first) {
        first = false;
        // Headers leave with the first message: the extensions used so far are known by now.
        if (rc.activatedExtensions.size > 0) call.setResponseHeader("a2a-extensions", formatActivatedExtensions([...rc.activatedExtensions]));
        if (response.payload.case === "task") call.setTaskId(response.payload.value.id);
      }
      if (blocked) enqueue(response);
      else if (!write(response, 1)) block();
    },
    end() {
      if (blocked && backlog.size > 0) ending = true;
      else endStream();
    },
    fail(error) {
      endStream(error instanceof Error ? error : new Error(String(error)));
    },
  };
  const onAbort = () => {
    if (!ended) reason = "client-gone";
    endStream();
  };
  streamOpened();
  // A stream lives no longer than its credential (issue 33 #7): UNAUTHENTICATED at a JWT's exp or when its key is removed.
  const unwatch = watchCredential(rc.caller, (error) => endStream(error));
  call.signal.addEventListener("abort", onAbort, { once: true });
  if (call.signal.aborted) onAbort();
  let handle: StreamHandle | undefined;
  let released = false;
  // Errors before the first event reject `opening`: they become the call's status (R-STREAM-1).
  const opening = options.open(sink).then((opened) => {
    if (released) opened.close();
    else handle = opened;
  });
  try {
    await Promise.race([opening, finished]);
    await finished;
  } finally {
    released = true;
    if (heartbeats !== undefined) clearInterval(heartbeats);
    unwatch();
    call.signal.removeEventListener("abort", onAbort);
    handle?.close();
    backlog.clear();
    limits.shared.adjust(-accounted);
    accounted = 0;
    streamEnded(reason);
    opening.catch(() => undefined); // the client was gone first: nobody is waiting for this answer
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
