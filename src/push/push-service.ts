import { channel } from "node:diagnostics_channel";
import { CHANNELS, type PushDeliveryStart, type CoreLogger } from "../lifecycle/index.js";
import type { DeliveryConfig, PushConfigStore } from "./ports/push-config-store.js";
import type { OutboxEntry, PushOutbox } from "./ports/push-outbox.js";
import type { WebhookBodyEncoders } from "./ports/webhook-body.js";
import { webhookPayload, type WebhookPayload } from "./webhook-payload.js";
import { FairScheduler, destinationHost, principalShare } from "./fair-scheduler.js";
import { nextAttemptDelay, parseRetryAfter, verdictOf, type RetryPolicy } from "./retry-schedule.js";
import type { WebhookSigner } from "./signature.js";
import type { AttemptResult, WebhookRequest } from "./webhook-sender.js";
import { webhookRequest } from "./webhook-request.js";

/** Where delivery outcomes are published for metrics (#16); free while nobody subscribes. */
export const DELIVERY_CHANNEL = CHANNELS.pushDelivery;

export interface DeliveryOutcome {
  readonly outcome: "delivered" | "retrying" | "gave-up" | "removed" | "refused";
  readonly attempt: number;
  readonly durationMs: number;
  readonly started?: PushDeliveryStart;
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
  /** Requests in flight to one host at most (A2A_PUSH_CONCURRENCY_PER_HOST); default: no cap beyond `concurrency`. */
  readonly concurrencyPerHost?: number;
  /** Makes the Standard Webhooks signature; undefined = no webhook-signature header. */
  readonly signer?: WebhookSigner;
  /** Bodies for configs made by v0.3 calls (R-V03-71); without one they get the 1.0 body. */
  readonly bodyEncoders?: WebhookBodyEncoders;
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
 * sent before the earlier ones of the same config were delivered or given up). In memory: its
 * oldest pending entry, and the few next ones the service was handed after their commit
 * (`queued`); past those, the lane is `behind` and reads its next entries back from the outbox.
 */
interface Lane {
  readonly key: string;
  /** The owner scope of the lane's task: whose share of the request slots it uses. */
  readonly principal: string;
  /** The host of the config's URL as last read: the per-host cap counts it. */
  host: string | undefined;
  head: OutboxEntry;
  /** Entries after `head`, in order, as they were handed over after their commit (at most MAX_QUEUED). */
  readonly queued: OutboxEntry[];
  /** An entry of this lane was seen and not queued: its next entries are read from the outbox. */
  behind: boolean;
  /** The configs' revision when the lane opened: what it queued is only trusted while it holds. */
  readonly revision: number | undefined;
  /** Failed attempts of `head`. */
  failed: number;
  lastStatus: string;
  /** The scan met a later entry of this lane while it was looking for its next one. */
  sawMore: boolean;
  /** The webhook body of `head` (and its media type), encoded at its first attempt and reused by its retries. */
  payload: WebhookPayload | undefined;
  timer: NodeJS.Timeout | undefined;
  /** What the current attempt published at its start (a traced event, someone listening). */
  started: PushDeliveryStart | undefined;
}

/** A config as last read, and when (or at which revision of the configs). */
interface CachedConfig {
  readonly config: DeliveryConfig;
  readonly readAt: number;
  readonly revision: number | undefined;
}

/** Entries a lane holds in memory beyond its head; past these it reads the outbox. */
const MAX_QUEUED = 8;

const delivery = channel(DELIVERY_CHANNEL);
const deliveryStart = channel(CHANNELS.pushDeliveryStart);

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
  /** Lanes waiting for a request slot, served fairly (issue 33 finding 4). */
  private readonly ready: FairScheduler<Lane>;
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
  /**
   * Configs by lane key, kept when a lane closes (a lane opens per event when events come one at a
   * time): valid while the store's revision holds, or for a second on a store without one.
   */
  private readonly configCache = new Map<string, CachedConfig>();
  private readonly revision: (() => number) | undefined;
  /** Lanes are claimed from a store shared by replicas: no cursor, and every lane ends by reading the outbox (which ends its claim). */
  private readonly claims: boolean;

  constructor(private readonly options: PushServiceOptions) {
    this.maxLanes = options.maxLanes ?? 4096;
    this.pageSize = options.pageSize ?? 256;
    this.now = options.now ?? Date.now;
    this.revision = options.configs.revision;
    this.claims = options.outbox.claimLanes !== undefined;
    this.ready = new FairScheduler({ perHost: options.concurrencyPerHost ?? options.concurrency, perPrincipal: principalShare(options.concurrency) });
  }

  /** Starts watching the outbox, resuming whatever a previous process left pending. */
  async start(): Promise<void> {
    this.options.outbox.onAdded((added, entries) => {
      this.pending += added;
      // Handed the entries and nothing read is waiting: take them as they are, no read back.
      if (entries !== undefined && !this.scanning && !this.scanBlocked && !this.claims) this.take(entries);
      else this.scan();
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
    this.ready.clear();
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
        if (!this.take(page)) return;
        if (page.length < this.pageSize) break;
      }
    } while (this.rescan);
  }

  /**
   * Entries in seq order (a page read, or a commit's entries handed over): each opens a lane for
   * its (task, config), or joins the one open. False when `maxLanes` lanes are open: the rest wait
   * in the outbox, read from the cursor once a lane closes.
   */
  private take(entries: readonly OutboxEntry[]): boolean {
    for (const entry of entries) {
      if (entry.seq <= this.cursor && !this.claims) continue; // seen already (claimed heads come in any order: no cursor)
      const key = laneKey(entry.taskId, entry.configId);
      const lane = this.lanes.get(key);
      if (lane !== undefined) {
        lane.sawMore = true;
        if (!lane.behind && lane.queued.length < MAX_QUEUED && lane.revision !== undefined) lane.queued.push(entry);
        else lane.behind = true;
      } else {
        if (this.lanes.size >= this.maxLanes) {
          this.scanBlocked = true;
          return false;
        }
        this.open(key, entry);
      }
      this.cursor = entry.seq;
    }
    return true;
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
    const lane: Lane = {
      key,
      principal: `${head.scope.tenant}\u0000${head.scope.principal}`,
      host: undefined,
      head,
      queued: [],
      behind: false,
      revision: this.revision?.(),
      failed: 0,
      lastStatus: "",
      sawMore: false,
      timer: undefined,
      payload: undefined,
      started: undefined,
    };
    this.lanes.set(key, lane);
    this.enqueue(lane);
  }

  private enqueue(lane: Lane): void {
    this.ready.push(lane);
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.inFlight < this.options.concurrency) {
      const lane = this.ready.take();
      if (lane === undefined) break; // none waits, or every waiting one is at its principal's or host's cap
      this.inFlight++;
      void this.attempt(lane)
        .catch((error: unknown) => {
          this.options.logger.error({ err: error, task_id: lane.head.taskId, config_id: lane.head.configId }, "push: a delivery failed unexpectedly");
          this.retryLater(lane, "error", undefined, 0);
        })
        .finally(() => {
          this.inFlight--;
          this.ready.finished(lane);
          this.pump();
          this.checkIdle();
        });
    }
  }

  /** One attempt of the lane's head, and what follows from its answer. */
  private async attempt(lane: Lane): Promise<void> {
    const entry = lane.head;
    const config = await this.configOf(lane);
    if (this.stopped) return;
    if (config === undefined) {
      // Deleted (its pending entries went with it) or its task purged: nothing is owed.
      await this.options.outbox.remove(entry.seq);
      this.pending = await this.options.outbox.count();
      await this.advance(lane);
      return;
    }
    lane.host = destinationHost(config.config.url);
    if (!this.ready.acquireHost(lane.host)) {
      this.ready.push(lane); // its host is at its cap: the lane waits for a request to that host to end
      return;
    }
    try {
      await this.send(lane, entry, config);
    } finally {
      this.ready.releaseHost(lane.host);
    }
  }

  /** Sends the lane's head to its config's URL, and acts on the answer. */
  private async send(lane: Lane, entry: OutboxEntry, { config, protocolVersion }: DeliveryConfig): Promise<void> {
    let payload = lane.payload ?? webhookPayload(entry, protocolVersion, this.options.bodyEncoders);
    if (payload instanceof Promise) payload = await payload; // another generation's body: no await for 1.0's
    lane.payload = payload;
    const started = this.now();
    lane.started = undefined;
    if (entry.traceContext !== undefined && deliveryStart.hasSubscribers) {
      // The write was traced: the delivery joins its trace (tracing adds the traceparent header).
      lane.started = { traceContext: entry.traceContext, headers: {} };
      deliveryStart.publish(lane.started);
    }
    const request = webhookRequest(config, entry, payload, this.options.signer, started, lane.started?.headers);
    const result = await this.options.sender.send(request, this.stopping.signal);
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
        this.publish("delivered", attempt, durationMs, lane);
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
        this.publish("removed", attempt, durationMs, lane);
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

  /**
   * The lane's config. A retry reads it again, and so does a lane after any config changed (on a
   * store without revisions: a config read over a second ago): a replaced config takes effect, a
   * deleted one stops the lane (its pending entries are gone with it).
   */
  private async configOf(lane: Lane): Promise<DeliveryConfig | undefined> {
    const revision = this.revision?.();
    const cached = this.configCache.get(lane.key);
    if (cached !== undefined && lane.failed === 0 && (revision !== undefined ? cached.revision === revision : this.now() - cached.readAt <= 1000)) {
      return cached.config;
    }
    const { scope, taskId, configId } = lane.head;
    const config = await this.options.configs.getForDelivery(scope, taskId, configId);
    if (config === undefined) {
      this.configCache.delete(lane.key); // a config made again with this id is not a replacement: no revision tells of it
      return undefined;
    }
    if (this.configCache.size >= this.maxLanes) this.configCache.clear(); // bounded; refilled as lanes go on
    this.configCache.set(lane.key, { config, readAt: this.now(), revision });
    return config;
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
    this.publish("retrying", lane.failed, durationMs, lane);
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
    this.publish(outcome, lane.failed + 1, durationMs, lane);
    await this.options.outbox.remove(entry.seq);
    this.pending--;
    await this.advance(lane);
  }

  /** The lane's head is done: its next entry (queued, or read from the outbox), or the lane closes. */
  private async advance(lane: Lane): Promise<void> {
    if (lane.queued.length > 0) {
      if (lane.revision === this.revision?.()) {
        this.next(lane, lane.queued.shift()!);
        return;
      }
      // A config changed since these were queued (deleted, replaced, its task purged): the outbox says what is still owed.
      lane.queued.length = 0;
      lane.behind = true;
    }
    if (!lane.behind && lane.revision !== undefined) {
      // Every entry of this lane up to the cursor was queued and is done; later ones open a new lane.
      this.close(lane);
      return;
    }
    const { taskId, configId } = lane.head;
    for (;;) {
      lane.sawMore = false;
      const next = await this.options.outbox.firstOf(taskId, configId, lane.head.seq);
      if (this.stopped) return;
      if (next !== undefined) {
        this.next(lane, next);
        return;
      }
      if (!lane.sawMore) break; // else the scan met an entry committed while we looked: look again
    }
    await this.close(lane);
  }

  private next(lane: Lane, entry: OutboxEntry): void {
    lane.head = entry;
    lane.payload = undefined;
    lane.failed = 0;
    lane.lastStatus = "";
    this.enqueue(lane);
  }

  private async close(lane: Lane): Promise<void> {
    this.lanes.delete(lane.key);
    if (this.lanes.size === 0 && !this.scanning && !this.scanBlocked && !this.claims) {
      // Everything the store announced was taken and is done: nothing is pending (no count read needed).
      this.pending = 0;
    } else if (this.now() - this.countedAt > 1000) {
      // The count drifts when a store drops entries by itself (Delete, retention): re-read it now and
      // then, when a lane closes (at most once a second, a count is not free on a large outbox).
      this.countedAt = this.now();
      this.pending = await this.options.outbox.count();
    }
    if (this.scanBlocked) this.scan();
  }

  private publish(outcome: DeliveryOutcome["outcome"], attempt: number, durationMs: number, lane: Lane): void {
    const started = lane.started;
    lane.started = undefined;
    if (delivery.hasSubscribers) delivery.publish({ outcome, attempt, durationMs, started } satisfies DeliveryOutcome);
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
