import type { TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { Answer, TaskScope } from "../../lifecycle/index.js";

/**
 * Where a task's webhook configs live (R-PUSH, A-7, A-8). Implementations sit beside the task
 * store, in the same database, because a config belongs to its task: it is scoped with it and
 * removed with it (retention). Implementations: src/storage/memory, src/storage/sqlite,
 * src/storage/postgres. All pass test/storage/push-config-store.contract.ts.
 */
export interface PushConfigStore {
  /**
   * Stores `config` (its `taskId` and `id` set) for a task of `scope`, replacing the config
   * with the same id. Throws TaskNotFoundError when the scope has no such task, and
   * PushConfigLimitError when the task already has `maxPerTask` other configs.
   * `snapshot`: the task as it is now is queued for this config before any later event (the
   * inline config of SendMessage, A-10). Answered within the call by a store that can (then an
   * inline config put in the turn its task was created commits with the task); a refusal is a
   * rejection.
   */
  put(scope: TaskScope, config: TaskPushNotificationConfig, options: PutConfigOptions): Answer<void>;
  /** Undefined when the task or the config is missing (the caller checks the task first). */
  get(scope: TaskScope, taskId: string, configId: string): Promise<TaskPushNotificationConfig | undefined>;
  /** As `get`, with the protocol version of the call that made the config (R-V03-70): what delivery reads. */
  getForDelivery(scope: TaskScope, taskId: string, configId: string): Promise<DeliveryConfig | undefined>;
  /** Configs of a task ordered by id, strictly after `afterId`, at most `limit`. */
  list(scope: TaskScope, taskId: string, page: { readonly limit: number; readonly afterId?: string }): Promise<TaskPushNotificationConfig[]>;
  /** Removes the config and every delivery still pending for it; nothing when it is missing. */
  delete(scope: TaskScope, taskId: string, configId: string): Promise<void>;
  /**
   * A number that changes whenever a config is put or deleted, or goes with its task, in this
   * process: what a reader read of configs (and of the deliveries they are owed) stays true while
   * it does not change. A store whose configs may change elsewhere (another replica) leaves it out.
   */
  readonly revision?: () => number;
}

export interface PutConfigOptions {
  readonly maxPerTask: number;
  readonly snapshot?: boolean;
  /** The A2A generation of the call that made the config (R-V03-70, BQ-21): its webhooks' shape. Default "1.0". */
  readonly protocolVersion?: PushProtocolVersion;
}

/** The A2A generations a config can be made by; a "0.3" config gets v0.3-shaped webhooks (R-V03-71). */
export type PushProtocolVersion = "1.0" | "0.3";

/** A config as delivery reads it. */
export interface DeliveryConfig {
  readonly config: TaskPushNotificationConfig;
  readonly protocolVersion: PushProtocolVersion;
}

/** A task has as many push configs as the operator allows (A2A_PUSH_MAX_CONFIGS_PER_TASK). */
export class PushConfigLimitError extends Error {
  constructor(
    readonly taskId: string,
    readonly limit: number,
  ) {
    super(`task ${taskId} has ${limit} push configs already, the most this server keeps per task: delete one first, or send the id of one to replace it`);
    this.name = "PushConfigLimitError";
  }
}
