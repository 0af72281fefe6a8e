import { clone } from "@bufbuild/protobuf";
import { TaskPushNotificationConfigSchema, type Task, type TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { type Answer, TaskNotFoundError, type TaskChange, type TaskScope } from "../../lifecycle/index.js";
import {
  type DeliveryConfig,
  PushConfigLimitError,
  type PushConfigStore,
  type PushProtocolVersion,
  type PutConfigOptions,
} from "../../push/ports/push-config-store.js";
import type { OutboxEntry, PushOutbox, TraceContextSource } from "../../push/ports/push-outbox.js";
import { pushPayloadOf, pushSnapshotPayloadOf } from "../push-event.js";

/** What the push store needs from the task store it lives beside. */
export interface MemoryTaskLookup {
  /** The task as stored (history and artifacts included), or undefined when the scope has no such task. */
  snapshot(scope: TaskScope, taskId: string): Task | undefined;
}

interface TaskConfigs {
  readonly scope: TaskScope;
  readonly byId: Map<string, TaskPushNotificationConfig>;
  /** The generation of the call that made each config not made by a 1.0 call (R-V03-70). */
  readonly versions: Map<string, PushProtocolVersion>;
}

/**
 * Push configs and the outbox of the memory store. A write of the memory store is final once
 * applied, so its outbox entries are added within the write (the same "commit"); listeners
 * hear of them, with the entries, once the write's own code has run (a microtask later).
 */
export class MemoryPushStore implements PushConfigStore, PushOutbox {
  private readonly configs = new Map<string, TaskConfigs>();
  private readonly entries = new Map<number, OutboxEntry>();
  /** Seqs of pending entries per (task, config), oldest first. */
  private readonly lanes = new Map<string, number[]>();
  /** Every seq ever added and not compacted away, ascending (entries may be gone: check `entries`). */
  private order: number[] = [];
  private lastSeq = 0;
  private readonly listeners: Array<(added: number, entries?: readonly OutboxEntry[]) => void> = [];
  /** Entries added since listeners were last told. */
  private unannounced: OutboxEntry[] = [];
  private changes = 0;
  private traceContext: TraceContextSource | undefined;

  constructor(private readonly tasks: MemoryTaskLookup) {}

  /** Whether any task has a config: a task write checks nothing more when none has. */
  get active(): boolean {
    return this.configs.size > 0;
  }

  readonly revision = (): number => this.changes;

  useTraceContext(source: TraceContextSource): void {
    this.traceContext = source;
  }

  // Called by the task store within a write.
  recordWrite(taskId: string, contextId: string, change: TaskChange): void {
    const configs = this.configs.get(taskId);
    if (configs === undefined) return;
    const payload = pushPayloadOf(taskId, contextId, change);
    if (payload === undefined) return;
    const { event, body } = payload;
    const now = Date.now();
    const traceContext = this.traceContext?.();
    for (const configId of configs.byId.keys()) this.add({ seq: 0, scope: configs.scope, taskId, configId, createdMs: now, event, body, traceContext });
  }

  /** The task is gone (retention): its configs and pending deliveries go with it. */
  taskRemoved(taskId: string): void {
    const configs = this.configs.get(taskId);
    if (configs === undefined) return;
    this.changes++;
    this.configs.delete(taskId);
    for (const configId of configs.byId.keys()) this.dropLane(taskId, configId);
  }

  clear(): void {
    this.changes++;
    this.configs.clear();
    this.entries.clear();
    this.lanes.clear();
    this.order = [];
  }

  // PushConfigStore
  /** `put` within the call; throws when refused. */
  private putAtOnce(scope: TaskScope, config: TaskPushNotificationConfig, options: PutConfigOptions): void {
    const task = this.tasks.snapshot(scope, config.taskId);
    if (task === undefined) throw new TaskNotFoundError(config.taskId);
    let configs = this.configs.get(config.taskId);
    const replaces = configs?.byId.has(config.id) === true;
    if (!replaces && (configs?.byId.size ?? 0) >= options.maxPerTask) throw new PushConfigLimitError(config.taskId, options.maxPerTask);
    if (configs === undefined)
      this.configs.set(config.taskId, (configs = { scope: { tenant: scope.tenant, principal: scope.principal }, byId: new Map(), versions: new Map() }));
    // A replaced config keeps what was queued for it: those deliveries now go where it says.
    configs.byId.set(config.id, clone(TaskPushNotificationConfigSchema, config));
    if ((options.protocolVersion ?? "1.0") === "1.0") configs.versions.delete(config.id);
    else configs.versions.set(config.id, options.protocolVersion!);
    if (replaces) this.changes++; // a new config makes nothing read before untrue
    if (options.snapshot) {
      const traceContext = this.traceContext?.();
      const { event, body } = pushSnapshotPayloadOf(task);
      this.add({ seq: 0, scope: configs.scope, taskId: config.taskId, configId: config.id, createdMs: Date.now(), event, body, traceContext });
    }
  }

  /** Within the call (with a task created in this turn: in its batch, so an inline config commits with its task); a refusal is a rejection. */
  put(scope: TaskScope, config: TaskPushNotificationConfig, options: PutConfigOptions): Answer<void> {
    try {
      this.putAtOnce(scope, config, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async get(scope: TaskScope, taskId: string, configId: string): Promise<TaskPushNotificationConfig | undefined> {
    const config = this.configsOf(scope, taskId)?.byId.get(configId);
    return config && clone(TaskPushNotificationConfigSchema, config);
  }

  async getForDelivery(scope: TaskScope, taskId: string, configId: string): Promise<DeliveryConfig | undefined> {
    const config = await this.get(scope, taskId, configId);
    return config && { config, protocolVersion: this.configsOf(scope, taskId)?.versions.get(configId) ?? "1.0" };
  }

  async list(scope: TaskScope, taskId: string, page: { limit: number; afterId?: string }): Promise<TaskPushNotificationConfig[]> {
    const configs = this.configsOf(scope, taskId);
    if (configs === undefined) return [];
    const ids = [...configs.byId.keys()].filter((id) => page.afterId === undefined || id > page.afterId).sort();
    return ids.slice(0, page.limit).map((id) => clone(TaskPushNotificationConfigSchema, configs.byId.get(id)!));
  }

  async delete(scope: TaskScope, taskId: string, configId: string): Promise<void> {
    const configs = this.configsOf(scope, taskId);
    if (configs === undefined || !configs.byId.delete(configId)) return;
    configs.versions.delete(configId);
    this.changes++;
    if (configs.byId.size === 0) this.configs.delete(taskId);
    this.dropLane(taskId, configId);
  }

  // PushOutbox
  async pendingAfter(afterSeq: number, limit: number): Promise<OutboxEntry[]> {
    const order = this.order;
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order[mid]! <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    const found: OutboxEntry[] = [];
    for (let i = lo; i < order.length && found.length < limit; i++) {
      const entry = this.entries.get(order[i]!);
      if (entry !== undefined) found.push(entry);
    }
    return found;
  }

  async firstOf(taskId: string, configId: string, afterSeq = 0): Promise<OutboxEntry | undefined> {
    const lane = this.lanes.get(laneKey(taskId, configId));
    const seq = lane?.find((s) => s > afterSeq);
    return seq === undefined ? undefined : this.entries.get(seq);
  }

  async remove(seq: number): Promise<void> {
    const entry = this.entries.get(seq);
    if (entry === undefined) return;
    this.entries.delete(seq);
    const key = laneKey(entry.taskId, entry.configId);
    const lane = this.lanes.get(key);
    if (lane !== undefined) {
      const at = lane.indexOf(seq);
      if (at >= 0) lane.splice(at, 1);
      if (lane.length === 0) this.lanes.delete(key);
    }
    this.compact();
  }

  async count(): Promise<number> {
    return this.entries.size;
  }

  onAdded(listener: (added: number, entries?: readonly OutboxEntry[]) => void): void {
    this.listeners.push(listener);
  }

  private configsOf(scope: TaskScope, taskId: string): TaskConfigs | undefined {
    const configs = this.configs.get(taskId);
    if (configs === undefined || configs.scope.tenant !== scope.tenant || configs.scope.principal !== scope.principal) return undefined;
    return configs;
  }

  private add(entry: OutboxEntry): void {
    const seq = ++this.lastSeq;
    const stored: OutboxEntry = { ...entry, seq };
    this.entries.set(seq, stored);
    this.order.push(seq);
    const key = laneKey(entry.taskId, entry.configId);
    const lane = this.lanes.get(key);
    if (lane === undefined) this.lanes.set(key, [seq]);
    else lane.push(seq);
    if (this.listeners.length > 0 && this.unannounced.push(stored) === 1) queueMicrotask(this.notify);
  }

  private readonly notify = (): void => {
    const added = this.unannounced;
    this.unannounced = [];
    for (const listener of this.listeners) listener(added.length, added);
  };

  private dropLane(taskId: string, configId: string): void {
    const key = laneKey(taskId, configId);
    const lane = this.lanes.get(key);
    if (lane === undefined) return;
    this.lanes.delete(key);
    for (const seq of lane) this.entries.delete(seq);
    this.compact();
  }

  /** Drops seqs of removed entries from `order` once they are most of it. */
  private compact(): void {
    if (this.order.length > 64 && this.entries.size * 2 < this.order.length) this.order = this.order.filter((seq) => this.entries.has(seq));
  }
}

function laneKey(taskId: string, configId: string): string {
  return `${taskId}\u0000${configId}`;
}
