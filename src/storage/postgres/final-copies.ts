import type { Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { ReadOptions, StoredTask, TaskScope } from "../../lifecycle/index.js";

/** Copies kept at most; the oldest go first. */
const LIMIT = 1000;
/** A copy is given out only this long after its write, ms. */
const KEEP_MS = 10_000;

interface FinalCopy {
  readonly tenant: string;
  readonly principal: string;
  readonly version: number;
  readonly task: Task;
  readonly at: number;
}

/**
 * Tasks this replica has just made terminal, whole (history and artifacts), so the read that
 * follows (a blocking SendMessage answers with the task once it settles) needs no round trip.
 *
 * Why a copy is the stored task: the write that made it terminal was a compare-and-set that
 * succeeded on a version this replica knew completely, and a terminal task never changes again
 * (every store refuses any change to it), on any replica. What may still happen to it is its
 * removal by retention (a purge of tasks settled long before); a copy is therefore given out
 * once, within KEEP_MS of its write, and a purge here drops them all. Any other read goes to
 * the table.
 */
export class FinalCopies {
  private readonly copies = new Map<string, FinalCopy>();

  keep(taskId: string, scope: TaskScope, version: number, task: Task): void {
    if (this.copies.size >= LIMIT) this.copies.delete(this.copies.keys().next().value!);
    this.copies.set(taskId, { tenant: scope.tenant, principal: scope.principal, version, task, at: performance.now() });
  }

  /** The copy, once (it is handed over: the caller may change it), or undefined. */
  take(scope: TaskScope, taskId: string, options?: ReadOptions): StoredTask | undefined {
    const copy = this.copies.get(taskId);
    if (copy === undefined) return undefined;
    this.copies.delete(taskId);
    if (copy.tenant !== scope.tenant || copy.principal !== scope.principal || performance.now() - copy.at > KEEP_MS) return undefined;
    const { task } = copy;
    const historyLength = options?.historyLength;
    if (historyLength !== undefined && task.history.length > historyLength) task.history = historyLength === 0 ? [] : task.history.slice(-historyLength);
    return { task, version: copy.version };
  }

  clear(): void {
    this.copies.clear();
  }
}
