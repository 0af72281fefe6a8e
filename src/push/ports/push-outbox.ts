import type { TaskScope } from "../../lifecycle/index.js";

/**
 * The deliveries still owed to webhooks. A store that holds push configs writes one entry per
 * (event, config of its task) in the SAME commit as the event itself, so a crash between the
 * commit and the delivery loses nothing (ruling A-29): this is the transactional outbox. The
 * push service (src/push) reads it after the commit and removes an entry once it was delivered
 * or given up. Implementations: src/storage/memory, src/storage/sqlite, src/storage/postgres; contract in
 * test/storage/push-config-store.contract.ts.
 */
export interface PushOutbox {
  /** Pending entries with `seq` above `afterSeq`, oldest first, at most `limit` (pages: memory stays bounded). */
  pendingAfter(afterSeq: number, limit: number): Promise<OutboxEntry[]>;
  /** The oldest pending entry of one (task, config) with `seq` above `afterSeq`: the next one its lane must deliver. */
  firstOf(taskId: string, configId: string, afterSeq?: number): Promise<OutboxEntry | undefined>;
  /**
   * Removes a delivered or given-up entry (nothing when it is gone already). A store may apply
   * removals in batches: until then a crash re-delivers them (at least once), and `pendingAfter`
   * and `count` no longer show them.
   */
  remove(seq: number): Promise<void>;
  /** How many entries are pending. */
  count(): Promise<number>;
  /**
   * Calls `listener` with how many entries a commit added, after it, outside the write that added them
   * (never inside a task write: a slow listener must not stall the task). `entries`: the entries
   * themselves, in seq order, when the store holds every entry added since the last call in memory
   * (a consumer may deliver from them without reading them back); undefined when it does not, and
   * the consumer reads them with `pendingAfter`.
   */
  onAdded(listener: (added: number, entries?: readonly OutboxEntry[]) => void): void;
  /**
   * Entries added from now on carry what `source` returns when they are written (the trace
   * context of the write); a store that cannot keep it leaves this out.
   */
  useTraceContext?(source: TraceContextSource): void;
  /**
   * Only on a store several processes deliver from (PostgreSQL); the single-process stores leave
   * it out. Claims up to `limit` (task, config) lanes that no live process holds and returns the
   * oldest pending entry of each, oldest first: their lanes are this process's until `firstOf`
   * finds nothing more after a head (the claim then ends), the claim is lost (it expired: the
   * holder stopped renewing it) or the store closes. Lanes this process holds are not returned
   * again. With it the delivery side reads no cursor: `pendingAfter` is not needed for delivery,
   * and `firstOf` also answers undefined once the lane is no longer this process's.
   */
  claimLanes?(limit: number): Promise<OutboxEntry[]>;
}

/**
 * The context of the write that is being made, as a W3C `traceparent` (undefined when there is
 * none): the app fills it from tracing when tracing is on, so that a webhook request can join the
 * trace of the call whose write it carries. The lifecycle knows the string only.
 */
export type TraceContextSource = () => string | undefined;

/** One event owed to one config. */
export interface OutboxEntry {
  /** Increasing in commit order over the whole store: a (task, config)'s events in version order. */
  readonly seq: number;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly configId: string;
  /** When the event was committed (ms since the epoch): bounds how long it may be retried. */
  readonly createdMs: number;
  /** The event: an lf.a2a.v1.StreamResponse in protobuf binary. */
  readonly event: Uint8Array;
  /** The trace context (W3C traceparent) of the write that produced the event, when tracing was on. */
  readonly traceContext?: string;
  /**
   * The event's ProtoJSON (the webhook body), when the store made it with the entry from the
   * event it wrote; not stored: entries read back from the outbox have none.
   */
  readonly body?: string;
}
