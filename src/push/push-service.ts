import { channel } from "node:diagnostics_channel";
import type { TaskPushNotificationConfig } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { CHANNELS } from "../lifecycle/diagnostics.js";
import type { CoreLogger } from "../lifecycle/logger.js";
import type { PushConfigStore } from "../lifecycle/push-config-store.js";
import type { OutboxEntry, PushOutbox } from "../lifecycle/push-outbox.js";
import { webhookBody } from "./body-encoding.js";
import { nextAttemptDelay, parseRetryAfter, verdictOf, type RetryPolicy } from "./retry-schedule.js";
import type { AttemptResult, WebhookRequest } from "./webhook-sender.js";
import { webhookRequest } from "./webhook-request.js";

/** Where delivery outcomes are published for metrics (#16); free while nobody subscribes. */
export const DELIVERY_CHANNEL = CHANNELS.pushDelivery;

export interface DeliveryOutcome {
  readonly outcome: "delivered" | "retrying" | "gave-up" | "removed" | "refused";
  readonly attempt: number;
  readonly durationMs: number;
}

/** Sends one request; the WebhookSender in production. */
export interface Sender {
  send(request: WebhookRequest, signal?: AbortSignal): Promise<AttemptResult>;
}

export interface PushServiceOptions {
  readonly outbox: PushOutbox;
  readonly configs: PushConfigStore;
  readonly sender: Sender;
  readonly retry: RetryPolicy;
  /** Requests in flight at most (A2A_PUSH_CONCURRENCY). */
  readonly concurrency: number;
  /** Standard Webhooks signing key; undefined = no webhook-signature header. */
  readonly signingKey?: Buffer;
  readonly logger: CoreLogger;
  /** (task, config) lanes held in memory at most: the rest wait in the outbox. */
  readonly maxLanes?: number;
  /** Outbox entries read per page. */
  readonly pageSize?: number;
  readonly now?: () => number;
  readonly random?: () => number;
}

/**
 * One (task, config): its events go out one at a time, in outbox order (A-29: an event is not
 * sent before the earlier ones of the same config were delivered or given up). Only its oldest
 * pending entry is in memory.
 */
interface Lane {
  readonly key: string;
  head: OutboxEntry;
  /** Failed attempts of `head`. */
  failed: number;
  lastStatus: string;
  /** The scan met a later entry of this lane while it was looking for its next one. */
  sawMore: boolean;
  /** The config as last read, and when: reused for the lane's next events for a second (a read and a decode per delivery saved). */
  config: TaskPushNotificationConfig | undefined;
  configReadAt: number;
  /** The webhook body of `head`, encoded at its first attempt and reused by its retries. */
  body: string | undefined;
  timer: NodeJS.Timeout | undefined;
}

const delivery = channel(DELIVERY_CHANNEL);

/**
 * Push delivery (R-PUSHD, A-9, A-10, A-12, A-29). It watches the outbox the store writes in the
 * same commit as each event, and never runs inside a task write: a slow or dead receiver holds
 * one of `concurrency` request slots at most, for one request timeout at a time, and delays
 * neither the agent, nor the task's streams, nor other configs' lanes. Memory stays bounded
 * however many deliveries are pending: at most `maxLanes` lanes, each holding one entry; the
 * outbox is read in pages by seq from a cursor. Delivered and given-up entries leave the outbox;
 * what is pending at a crash is resumed by the next process.
 */
export class PushService {
  private readonly lanes = new Map<string, Lane>();
  private readonly ready: Lane[] = [];
  private inFlight = 0;
  /** Every entry up to here was seen by a scan (it has a lane, or was delivered). */
  private cursor = 0;
  private scanning = false;
  private rescan = false;
  /** A scan stopped because `maxLanes` lanes were open: resume when one closes. */
  private scanBlocked = false;
  private pending = 0;
  private countedAt = 0;
  private gaveUp = 0;
  private delivered = 0;
  private stopped = false;
  /** Aborts the requests in flight at stop. */
  private readonly stopping = new AbortController();
  private readonly maxLanes: number;
  private readonly pageSize: number;
  private readonly now: () => number;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: PushServiceOptions) {
    this.maxLanes = options.maxLanes ?? 4096;
    this.pageSize = options.pageSize ?? 256;
    this.now = options.now ?? Date.now;
  }

  /** Starts watching the outbox, resuming whatever a previous process left pending. */
  async start(): Promise<void> {
    this.options.outbox.onAdded((added) => {
      this.pending += added;
      this.scan();
    });
    this.pending = await this.options.outbox.count();
    this.scan();
  }

  /** Stops sending; what is pending stays in the outbox for the next start. */
  stop(): void {
    this.stopped = true;
    for (const lane of this.lanes.values()) clearTimeout(lane.timer);
    this.stopping.abort(new Error("push delivery is stopping"));
    this.lanes.clear();
    this.ready.length = 0;
  }

  /** For metrics (#16): deliveries pending, and the age of the oldest one held. */
  stats(): { pending: number; oldestPendingAgeMs: number; delivered: number; gaveUp: number } {
    let oldest = Infinity;
    for (const lane of this.lanes.values()) oldest = Math.min(oldest, lane.head.createdMs);
    return {
      pending: Math.max(this.pending, 0),
      oldestPendingAgeMs: oldest === Infinity ? 0 : Math.max(0, this.now() - oldest),
      delivered: this.delivered,
      gaveUp: this.gaveUp,
    };
  }

  /** Resolves once nothing is pending or in flight (tests, benchmarks, shutdown). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.lanes.size === 0 && !this.scanning && this.inFlight === 0;
  }

  /** Reads the outbox past the cursor, opening a lane for each (task, config) that has none. */
  private scan(): void {
    if (this.stopped) return;
    if (this.scanning) {
      this.rescan = true;
      return;
    }
    this.scanning = true;
    void this.scanPages()
      .catch((error: unknown) => this.options.logger.error({ err: error }, "push: reading the outbox failed"))
      .finally(() => {
        this.scanning = false;
        this.checkIdle();
      });
  }

  private async scanPages(): Promise<void> {
    do {
      this.rescan = false;
      this.scanBlocked = false;
      for (;;) {
        const page = await this.nextPage();
        if (page === undefined) return;
        if (this.stopped) return;
        for (const entry of page) {
          const key = laneKey(entry.taskId, entry.configId);
          const lane = this.lanes.get(key);
          if (lane !== undefined) {
            lane.sawMore = true;
          } else {
            if (this.lanes.size >= this.maxLanes) {
              this.scanBlocked = true;
              return;
            }
            this.open(key, entry);
          }
          this.cursor = entry.seq;
        }
        if (page.length < this.pageSize) break;
      }
    } while (this.rescan);
  }

  /** Entries past the cursor; or, on a store shared by replicas, the heads of lanes claimed for this process (undefined: no room for one). */
  private async nextPage(): Promise<OutboxEntry[] | undefined> {
    const { outbox } = this.options;
    if (outbox.claimLanes === undefined) return outbox.pendingAfter(this.cursor, this.pageSize);
    const room = Math.min(this.pageSize, this.maxLanes - this.lanes.size);
    if (room > 0) return outbox.claimLanes(room);
    this.scanBlocked = true;
    return undefined;
  }

  private open(key: string, head: OutboxEntry): void {
    const lane: Lane = { key, head, failed: 0, lastStatus: "", sawMore: false, timer: undefined, config: undefined, configReadAt: 0, body: undefined };
    this.lanes.set(key, lane);
    this.enqueue(lane);
  }

  private enqueue(lane: Lane): void {
    this.ready.push(lane);
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.inFlight < this.options.concurrency && this.ready.length > 0) {
      const lane = this.ready.shift()!;
      this.inFlight++;
      void this.attempt(lane)
        .catch((error: unknown) => {
          this.options.logger.error({ err: error, task_id: lane.head.taskId, config_id: lane.head.configId }, "push: a delivery failed unexpectedly");
          this.retryLater(lane, "error", undefined, 0);
        })
        .finally(() => {
          this.inFlight--;
          this.pump();
          this.checkIdle();
        });
    }
  }

  /** One attempt of the lane's head, and what follows from its answer. */
  private async attempt(lane: Lane): Promise<void> {
    const entry = lane.head;
    // A retry, or a config read over a second ago, is read again: a replaced config takes effect,
    // a deleted one stops the lane (its pending entries are gone with it).
    if (lane.config === undefined || lane.failed > 0 || this.now() - lane.configReadAt > 1000) {
      lane.config = await this.options.configs.get(entry.scope, entry.taskId, entry.configId);
      lane.configReadAt = this.now();
    }
    const config = lane.config;
    if (this.stopped) return;
    if (config === undefined) {
      // Deleted (its pending entries went with it) or its task purged: nothing is owed.
      await this.options.outbox.remove(entry.seq);
      this.pending = await this.options.outbox.count();
      await this.advance(lane);
      return;
    }
    const started = this.now();
    lane.body ??= webhookBody(entry.event);
    const result = await this.options.sender.send(webhookRequest(config, entry, lane.body, this.options.signingKey, started), this.stopping.signal);
    if (this.stopped) return;
    const durationMs = this.now() - started;
    const attempt = lane.failed + 1;
    if (result.kind === "refused") {
      await this.giveUp(lane, `refused: ${result.reason}`, "refused", durationMs);
      return;
    }
    if (result.kind === "failed") {
      this.retryLater(lane, result.reason, undefined, durationMs);
      return;
    }
    const status = `HTTP ${result.status}`;
    switch (verdictOf(result.status)) {
      case "delivered":
        this.publish("delivered", attempt, durationMs);
        this.delivered++;
        await this.options.outbox.remove(entry.seq);
        this.pending--;
        await this.advance(lane);
        return;
      case "remove":
        // 410 Gone: the receiver wants no more; the config and what it was owed go.
        this.options.logger.warn(
          { task_id: entry.taskId, config_id: entry.configId, last_status: status },
          "push: the receiver answered 410 Gone; its config is removed",
        );
        this.publish("removed", attempt, durationMs);
        await this.options.configs.delete(entry.scope, entry.taskId, entry.configId);
        this.pending = await this.options.outbox.count(); // the config's other entries went with it
        await this.advance(lane);
        return;
      case "give-up":
        await this.giveUp(lane, status, "gave-up", durationMs);
        return;
      case "retry":
        this.retryLater(lane, status, parseRetryAfter(result.retryAfter, this.now()), durationMs);
        return;
    }
  }

  private retryLater(lane: Lane, lastStatus: string, retryAfterMs: number | undefined, durationMs: number): void {
    lane.failed++;
    lane.lastStatus = lastStatus;
    const delay = nextAttemptDelay(this.options.retry, lane.failed, this.now() - lane.head.createdMs, retryAfterMs, this.options.random);
    if (delay === undefined) {
      void this.giveUp(lane, lastStatus, "gave-up", durationMs).catch((error: unknown) =>
        this.options.logger.error({ err: error }, "push: giving up a delivery failed"),
      );
      return;
    }
    this.publish("retrying", lane.failed, durationMs);
    lane.timer = setTimeout(() => {
      lane.timer = undefined;
      this.enqueue(lane);
    }, delay);
    lane.timer.unref();
  }

  /** Logged and counted; the lane goes on with its next event. */
  private async giveUp(lane: Lane, lastStatus: string, outcome: "gave-up" | "refused", durationMs: number): Promise<void> {
    const entry = lane.head;
    this.gaveUp++;
    this.options.logger.warn(
      { task_id: entry.taskId, config_id: entry.configId, last_status: lastStatus, attempts: lane.failed + (outcome === "refused" ? 1 : 0) },
      "push: gave up a delivery",
    );
    this.publish(outcome, lane.failed + 1, durationMs);
    await this.options.outbox.remove(entry.seq);
    this.pending--;
    await this.advance(lane);
  }

  /** The lane's head is done: its next entry, or the lane closes. */
  private async advance(lane: Lane): Promise<void> {
    const { taskId, configId } = lane.head;
    for (;;) {
      lane.sawMore = false;
      const next = await this.options.outbox.firstOf(taskId, configId, lane.head.seq);
      if (this.stopped) return;
      if (next !== undefined) {
        lane.head = next;
        lane.body = undefined;
        lane.failed = 0;
        lane.lastStatus = "";
        this.enqueue(lane);
        return;
      }
      if (!lane.sawMore) break; // else the scan met an entry committed while we looked: look again
    }
    this.lanes.delete(lane.key);
    // The count drifts when a store drops entries by itself (Delete, retention): re-read it now and
    // then, when a lane closes (at most once a second, a count is not free on a large outbox).
    if (this.lanes.size === 0 || this.now() - this.countedAt > 1000) {
      this.countedAt = this.now();
      this.pending = await this.options.outbox.count();
    }
    if (this.scanBlocked) this.scan();
  }

  private publish(outcome: DeliveryOutcome["outcome"], attempt: number, durationMs: number): void {
    if (delivery.hasSubscribers) delivery.publish({ outcome, attempt, durationMs } satisfies DeliveryOutcome);
  }

  private checkIdle(): void {
    if (!this.isIdle() || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function laneKey(taskId: string, configId: string): string {
  return `${taskId}\u0000${configId}`;
}
