import * as grpc from "@grpc/grpc-js";
import type { StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { RequestContext, StreamHandle } from "../lifecycle/task-service.js";
import type { StreamSink } from "../lifecycle/task-feed.js";
import { GrpcStatusError } from "./error-status.js";
import type { CallContext, StreamWriter } from "./grpc-adapter.js";
import { formatActivatedExtensions } from "./service-parameters.js";

/** The status a client gets when it reads too slowly; it says what to do about it. */
export function slowClientError(bufferEvents: number): GrpcStatusError {
  return new GrpcStatusError(
    grpc.status.RESOURCE_EXHAUSTED,
    `the client fell more than ${bufferEvents} events behind the task and was disconnected; ` +
      "call SubscribeToTask to get a fresh snapshot and the events after it",
  );
}

/**
 * Connects a core stream to a gRPC server stream with flow control. Writes go out while the
 * client keeps up; once grpc-js reports back-pressure (write() returned false) and has had an
 * event-loop turn to flush, at most `bufferEvents` further events are queued until 'drain', and a
 * client that falls further behind is ended with RESOURCE_EXHAUSTED: its backlog stays bounded
 * (grpc-js's 16-message queue, plus a burst the agent wrote in one go, plus `bufferEvents`) and
 * the publisher (and so every other subscriber) never waits for it.
 *
 * A client that goes away (cancel, deadline, dropped connection, server shutdown) only closes
 * its own subscription, at once: also while `open` is still waiting for the agent's first
 * answer, so an abandoned call holds nothing until the agent gets round to answering.
 */
export async function pipeStream(
  call: CallContext,
  out: StreamWriter<StreamResponse>,
  bufferEvents: number,
  open: (sink: StreamSink) => Promise<StreamHandle>,
  rc: RequestContext,
): Promise<void> {
  let settle!: (error?: Error) => void;
  let settled = false;
  const finished = new Promise<void>((resolve, reject) => {
    settle = (error) => {
      if (settled) return;
      settled = true;
      if (error) reject(error);
      else resolve();
    };
  });
  let queuedWhileBlocked = 0;
  let blocked = false;
  // Back-pressure only says something about the client once grpc-js has had an I/O turn to flush:
  // an agent writing a burst in one go (the memory store answers in microtasks) fills grpc-js's
  // queue before any byte can leave, also for a client that reads as fast as it can.
  let turnPassed = false;
  let first = true;
  const unblock = () => {
    blocked = false;
    queuedWhileBlocked = 0;
  };
  const sink: StreamSink = {
    next(response) {
      if (settled || out.closed) return;
      if (first) {
        first = false;
        // Headers leave with the first message: the extensions used so far are known by now.
        if (rc.activatedExtensions.size > 0) call.setResponseHeader("a2a-extensions", formatActivatedExtensions([...rc.activatedExtensions]));
        if (response.payload.case === "task") call.setTaskId(response.payload.value.id);
      }
      if (blocked && turnPassed && ++queuedWhileBlocked > bufferEvents) {
        call.setLogField("slow_client", "true");
        settle(slowClientError(bufferEvents));
        return;
      }
      if (!out.write(response) && !blocked) {
        blocked = true;
        turnPassed = false;
        setImmediate(() => (turnPassed = true));
        void out.waitForDrain().then(unblock);
      }
    },
    end() {
      settle();
    },
    fail(error) {
      settle(error instanceof Error ? error : new Error(String(error)));
    },
  };
  const onAbort = () => settle();
  call.signal.addEventListener("abort", onAbort, { once: true });
  if (call.signal.aborted) settle();
  let handle: StreamHandle | undefined;
  let released = false;
  // Errors before the first event reject `opening`: they become the call's status (R-STREAM-1).
  const opening = open(sink).then((opened) => {
    if (released) opened.close();
    else handle = opened;
  });
  try {
    await Promise.race([opening, finished]);
    await finished;
  } finally {
    released = true;
    call.signal.removeEventListener("abort", onAbort);
    handle?.close();
    opening.catch(() => undefined); // the client left first: nobody is waiting for this answer
  }
}
