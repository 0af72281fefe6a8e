import type { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { StoredTask, TaskScope } from "./task-repository.js";

/**
 * Told that this process's run of `taskId` must stop: another process settled the task (a
 * cancel on another replica: `state` is what it became) or took the task over (its lease ran
 * out: `state` undefined).
 */
export type RunLost = (taskId: string, state: TaskState | undefined) => void;

/**
 * Who runs a task when several processes share one store. Absent (undefined) with a store only
 * one process uses: the process then owns every task it works on. Implemented by
 * src/storage/postgres/run-leases.ts.
 *
 * - A task this process creates is its own from the start (the store leases it at creation).
 * - `hold` keeps the lease of a task this process runs renewed until `release`; if it is lost,
 *   `lost` is called and the run stops. Two processes therefore never run one task.
 * - A follow-up to an interrupted task first `claim`s it: false if another process holds it.
 * - `orphans` takes over active tasks no live process holds (their owner died): the restart
 *   rule is applied to them, as at start-up.
 */
export interface RunLeases {
  hold(taskId: string, lost: RunLost): void;
  /** The run ended, leaving its task in `state`. */
  release(taskId: string, state: TaskState | undefined): void;
  claim(scope: TaskScope, taskId: string): Promise<boolean>;
  orphans(): Promise<Array<{ scope: TaskScope; task: StoredTask }>>;
}
