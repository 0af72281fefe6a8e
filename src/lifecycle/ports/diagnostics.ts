import { channel } from "node:diagnostics_channel";
import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * What the service tells observers (metrics, tracing) through node:diagnostics_channel, in one
 * place so that producers and consumers share the names and the message shapes.
 *
 * The rule for producers: build and publish a message only when `hasSubscribers` is true. With
 * nobody listening, a publish point costs one property read; the core knows nothing of
 * Prometheus or OpenTelemetry, only that someone may be listening.
 */
export const CHANNELS = {
  /** A task was created and is durable: TaskCreated. */
  taskCreated: "a2a:task:created",
  /** A task became terminal or interrupted (durably); a task that is continued settles again: TaskSettled. */
  taskSettled: "a2a:task:settled",
  /**
   * An agent run starts: RunObservation. Published with `runStores`, so an observer may bind an
   * AsyncLocalStorage to it and the agent runs inside that store (tracing: the run's span).
   */
  runStart: "a2a:run:start",
  /** The same RunObservation object, completed, once the agent returned or threw. */
  runEnd: "a2a:run:end",
  /** A store committed (or lost) a batch of writes: StoreCommit. */
  storeCommit: "a2a:store:commit",
  /** A push notification delivery attempt ended: PushDelivery (published by src/push). */
  pushDelivery: "a2a:push:delivery",
  /**
   * A delivery attempt of an event whose write was traced starts: PushDeliveryStart (published by
   * src/push only then, and only while someone listens). The listener may add headers (tracing:
   * `traceparent` of the delivery's span); the same object comes back in PushDelivery.`started`.
   */
  pushDeliveryStart: "a2a:push:delivery:start",
  /** A stream wrote a response to its client: StreamEvent (published by src/streams). */
  streamEvent: "a2a:stream:event",
  /** A stream ended: StreamEnded (published by src/streams). */
  streamEnded: "a2a:stream:ended",
} as const;

export interface TaskCreated {
  readonly contextId: string;
}

export interface TaskSettled {
  readonly state: TaskState;
}

/** One agent run, from start to end; the same object is published on both channels. */
export interface RunObservation {
  readonly contextId: string;
  /** Set at start for a follow-up or resume; for a new task, known by the end (if the agent made one). */
  taskId: string | undefined;
  /** A resumed run (after a restart) rather than one for an incoming message. */
  readonly resumed: boolean;
  readonly startedAt: number;
  /** Set at the end: how long the agent took, ms. */
  durationMs: number | undefined;
  /** Set at the end: the agent threw (or rejected). */
  failed: boolean;
  /**
   * Left to the tracer (src/observability): what it keeps with the run from start to end, its
   * span. A field rather than a WeakMap of the tracer's: the WeakMap's set was the costliest line
   * of a traced run's start.
   */
  tracerState: unknown;
}

export interface StoreCommit {
  /** "sqlite", ... */
  readonly store: string;
  readonly durationMs: number;
  /** Task writes in the batch. */
  readonly writes: number;
  /** Tasks (rows) the batch touched. */
  readonly tasks: number;
  /** The commit failed and its writes were lost. */
  readonly failed: boolean;
}

export type PushDeliveryOutcome = "delivered" | "retrying" | "gave-up" | "removed" | "refused";

export interface PushDelivery {
  readonly outcome: PushDeliveryOutcome;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly durationMs: number;
  /** What was published at the attempt's start, if anything (see pushDeliveryStart). */
  readonly started?: PushDeliveryStart;
}

export interface PushDeliveryStart {
  /** The trace context (W3C traceparent) of the write that produced the event. */
  readonly traceContext: string;
  /** Headers the webhook request carries in addition to its own; listeners add to them. */
  readonly headers: Record<string, string>;
}

export interface StreamEvent {
  /** The response written stands for several published events, merged while the client was behind. */
  readonly merged: boolean;
}

export type StreamEndReason = "budget" | "client-gone" | "done";

export interface StreamEnded {
  readonly reason: StreamEndReason;
}

export const taskCreatedChannel = channel(CHANNELS.taskCreated);
export const taskSettledChannel = channel(CHANNELS.taskSettled);
export const runStartChannel = channel(CHANNELS.runStart);
export const runEndChannel = channel(CHANNELS.runEnd);
export const storeCommitChannel = channel(CHANNELS.storeCommit);
export const pushDeliveryChannel = channel(CHANNELS.pushDelivery);
export const streamEventChannel = channel(CHANNELS.streamEvent);
export const streamEndedChannel = channel(CHANNELS.streamEnded);
