import { TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskEventHub } from "../../events/event-hub.js";
import { ActiveRuns } from "./active-runs.js";
import type { AgentRun } from "./agent-run.js";
import type { Caller } from "../ports/agent.js";
import type { RunLeases, RunLost } from "../ports/run-leases.js";
import type { StoredTask, TaskRepository, TaskScope } from "../ports/task-repository.js";
import { isTerminal } from "../model/task-state.js";
import { TaskSizeEstimate, type TaskSizeLimits } from "../writes/task-size.js";
import { TaskWriter } from "../writes/task-writer.js";
import type { RunWriter } from "./agent-run.js";

/**
 * Who works on which task in this process: the single writer of every task this process is
 * working on or watching, with the run working on it (TaskWriter.run), and the runs in flight.
 * Why the run on the writer and not a Map of its own: a second Map set and emptied on every call
 * reallocated its table each time it emptied.
 */
export class RunRegistry {
  readonly #writers = new Map<string, RunWriter>();
  /** Runs in flight, each with the promise that ends when it has finished. */
  readonly #active = new ActiveRuns<AgentRun>();

  constructor(
    private readonly repository: TaskRepository,
    private readonly hub: TaskEventHub,
    /** Who runs which task among replicas; undefined = this process alone. */
    private readonly leases?: RunLeases,
    /** task size limits; undefined = unbounded. */
    private readonly sizes?: TaskSizeLimits,
  ) {}

  /** `run` works on `writer`'s task from now on (with replicas: its lease is held and renewed). */
  attach(writer: RunWriter, run: AgentRun): void {
    writer.run = run;
    this.leases?.hold(writer.taskId, this.#lost);
  }

  /** `writer`'s run no longer works on it (with replicas: the lease is given up). */
  detach(writer: RunWriter): void {
    writer.run = undefined;
    this.leases?.release(writer.taskId, writer.state);
  }

  /** True when other processes run tasks of the same store (replicas): what was read may be stale by a claim. */
  get sharesTasks(): boolean {
    return this.leases !== undefined;
  }

  /** With replicas: takes an interrupted task for a follow-up here; false if another process holds it. */
  claim(scope: TaskScope, taskId: string): Promise<boolean> {
    return this.leases === undefined ? Promise.resolve(true) : this.leases.claim(scope, taskId);
  }

  /** The task's writer in this process: the one there is, else a new one from the task as stored. */
  writerFor(scope: Caller, stored: StoredTask): RunWriter {
    const existing = this.#writers.get(stored.task.id);
    if (existing) return existing;
    const writer = new TaskWriter<AgentRun>({
      repository: this.repository,
      hub: this.hub,
      scope,
      taskId: stored.task.id,
      contextId: stored.task.contextId,
      version: stored.version,
      state: stored.task.status!.state,
      onIdle: this.#writerIdle,
      // Measured once per writer (O(task)); each write then adds only its own size.
      size: this.sizes && new TaskSizeEstimate(this.sizes, stored.task),
    });
    this.#writers.set(stored.task.id, writer);
    return writer;
  }

  /** The run working on task `taskId` in this process, if any. */
  runOf(taskId: string): AgentRun | undefined {
    return this.#writers.get(taskId)?.run;
  }

  /** Forgets `writer` once nothing is left for it to do (it may have been replaced already: then nothing changes). */
  dropIfIdle(writer: RunWriter): void {
    if (writer.idle && writer.run === undefined && this.#writers.get(writer.taskId) === writer) this.#writers.delete(writer.taskId);
  }

  /** `run` is in flight until `done` resolves (and ended() is called). */
  started(run: AgentRun, done: Promise<void>): void {
    this.#active.add(run, done);
  }

  /** `run` has finished: it is no longer in flight, nor working on its task. */
  ended(run: AgentRun): void {
    this.#active.delete(run);
    const writer = run.taskWriter;
    if (writer === undefined) return;
    if (writer.run === run) this.detach(writer);
    this.dropIfIdle(writer);
  }

  /** The runs in flight now (a copy). */
  running(): AgentRun[] {
    return this.#active.runs();
  }

  get runningCount(): number {
    return this.#active.size;
  }

  /**
   * Another process settled or took over a task this process runs (replicas): the run stops, and
   * whoever waits for the task hears how it was settled. One function for every run.
   */
  readonly #lost: RunLost = (taskId, state) => {
    const writer = this.#writers.get(taskId);
    const run = writer?.run;
    if (writer === undefined || run === undefined) return;
    if (state !== undefined && isTerminal(state)) writer.settledElsewhere(state);
    else writer.takenOver();
    run.stop(state === TaskState.CANCELED ? "the task was canceled" : "another instance took the task over");
  };

  /** One function for every writer (not a closure per task). */
  readonly #writerIdle = (writer: RunWriter): void => this.dropIfIdle(writer);
}
