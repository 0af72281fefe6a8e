import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  ListTasksResponseSchema,
  StreamResponseSchema,
  TaskState,
  type ListTasksRequest,
  type ListTasksResponse,
  type SendMessageRequest,
  type SendMessageResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { TaskEventHub } from "../events/event-hub.js";
import type { Agent, Caller } from "./ports/agent.js";
import type { AgentRun } from "./runs/agent-run.js";
import { StatusClock, microsAtLeast } from "./model/clock.js";
import { TaskNotCancelableError, TaskNotFoundError } from "./model/errors.js";
import type { CoreLogger } from "./ports/logger.js";
import type { PageTokenCodec } from "./reads/page-token.js";
import type { RequestContext } from "./ports/request-context.js";
import type { RunAdmission } from "./ports/run-admission.js";
import { RunLauncher, type AttachInlinePushConfig } from "./runs/run-launcher.js";
import type { RunLeases } from "./ports/run-leases.js";
import { RunRegistry } from "./runs/run-registry.js";
import { agentGaveNoAnswer, collectExtensions, SendMessageReply } from "./runs/send-message-reply.js";
import { refuseTerminal, requireTask, serverStatus } from "./writes/task-guards.js";
import { TaskFeed, type StreamSink } from "./reads/task-feed.js";
import { resumeStream } from "./reads/stream-resume.js";
import { IllegalTransitionError, type TaskRepository } from "./ports/task-repository.js";
import { isSettled, isTerminal, stateName } from "./model/task-state.js";
import { fitToReply } from "./reads/list-page-fit.js";
import type { TaskSizeLimits } from "./writes/task-size.js";
import type { RunWriter } from "./runs/agent-run.js";

export type { RequestContext } from "./ports/request-context.js";

export interface TaskServiceOptions {
  readonly repository: TaskRepository;
  readonly hub: TaskEventHub;
  readonly agent: Agent;
  readonly pageTokens: PageTokenCodec;
  readonly logger: CoreLogger;
  readonly clock?: StatusClock;
  /** Media types accepted in incoming parts (R-SEND-9); empty = anything. */
  readonly acceptedInputMediaTypes?: readonly string[];
  /** How long an agent's cancel() hook may take before the task is canceled anyway. */
  readonly cancelHookTimeoutMs?: number;
  /** Registers SendMessage's inline push config (see RunLauncherOptions); unset = push off. */
  readonly attachInlinePushConfig?: AttachInlinePushConfig;
  /** Limits on agent runs (src/limits); asked before a run writes anything. Undefined = none. */
  readonly runAdmission?: RunAdmission;
  /** reply and task size limits, with the edge's measure of a task. Undefined = unbounded. */
  readonly sizes?: TaskSizeLimits;
  /** Who runs which task when several processes share the store (replicas); undefined = this process alone. */
  readonly leases?: RunLeases;
}

export interface StreamHandle {
  /** The client is gone: stop delivering. The task is not affected (R-STREAM-9). */
  close(): void;
}

const DEFAULT_PAGE_SIZE = 50;

/** The status message of a task whose run the server stopped at shutdown. */
export const SHUT_DOWN_MESSAGE = "the server shut down before the task finished; send the request again";

/**
 * The task lifecycle behind the RPCs: one method per RPC, plus recovery at start and shutdown.
 * Runs are started and seen to their end by the RunLauncher, the writer of each task this
 * process works on is kept by the RunRegistry, and SendMessage's reply is SendMessageReply's.
 * Blocking, non-blocking and streaming callers are answered from the same events; the rules
 * that need stored state (existence, terminal tasks, context ids, cancelation) are enforced
 * here and in the launcher. It knows nothing of gRPC.
 */
export class TaskService {
  readonly clock: StatusClock;
  readonly #registry: RunRegistry;
  readonly #launcher: RunLauncher;
  readonly #reply: SendMessageReply;

  constructor(private readonly options: TaskServiceOptions) {
    this.clock = options.clock ?? new StatusClock();
    this.#registry = new RunRegistry(options.repository, options.hub, options.leases, options.sizes);
    this.#launcher = new RunLauncher({
      repository: options.repository,
      registry: this.#registry,
      agent: options.agent,
      logger: options.logger,
      clock: this.clock,
      acceptedInputMediaTypes: options.acceptedInputMediaTypes,
      attachInlinePushConfig: options.attachInlinePushConfig,
      runAdmission: options.runAdmission,
    });
    this.#reply = new SendMessageReply(options.repository);
  }

  private get repository(): TaskRepository {
    return this.options.repository;
  }

  sendMessage(rc: RequestContext, request: SendMessageRequest): Promise<SendMessageResponse> {
    const message = request.message!;
    if (message.taskId !== "" || message.referenceTaskIds.length > 0) return this.#launcher.start(rc, request).then((run) => this.#reply.to(rc, request, run));
    // The usual message (a new task, no references) starts its run without a microtask, and is
    // usually answered within the call: then no await, and one promise for the whole reply.
    let run: AgentRun;
    try {
      run = this.#launcher.startNewTask(rc, request);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#reply.to(rc, request, run);
  }

  /**
   * Starts a streaming answer. Resolves once the first event went to `sink`; rejects (with
   * nothing sent) when the request is refused, so the edge can end the call with its status.
   */
  async sendStreamingMessage(rc: RequestContext, request: SendMessageRequest, sink: StreamSink): Promise<StreamHandle> {
    const feed = new TaskFeed(this.options.hub, sink, request.configuration?.historyLength);
    const run = await this.#launcher.start(rc, request, (prepared) => {
      if (prepared.existing) return feed.attachWithSnapshot(prepared.existing.taskId, () => this.repository.get(rc.caller, prepared.existing!.taskId));
      prepared.run.onCreate.push((writer) => feed.attachAtCreation(writer.taskId));
      return Promise.resolve(undefined);
    });
    const outcome = await run.outcome;
    collectExtensions(rc, run);
    if (outcome.kind === "nothing" || outcome.kind === "error") {
      feed.close();
      throw outcome.kind === "error" ? outcome.error : agentGaveNoAnswer();
    }
    if (outcome.kind === "message") feed.sendMessageAndEnd(create(StreamResponseSchema, { payload: { case: "message", value: outcome.message } }));
    else this.failStreamIfWritesLost(outcome.writer, feed);
    return { close: () => feed.close() };
  }

  /**
   * A store that commits later can lose a batch (disk full, I/O error): the stream then never
   * gets the events it waits for, so it ends with the store's error instead of hanging.
   */
  private failStreamIfWritesLost(writer: RunWriter, feed: TaskFeed): void {
    if (writer.settled || this.repository.afterCommit === undefined) return;
    writer.onSettled(() => {
      if (writer.commitFailure !== undefined) feed.fail(writer.commitFailure);
    });
  }

  /** `resumeAfter`: the version a resume cursor names: the events after it, no snapshot. */
  async subscribeToTask(rc: RequestContext, taskId: string, sink: StreamSink, resumeAfter?: number): Promise<StreamHandle> {
    if (resumeAfter !== undefined) return resumeStream(this.options.hub, this.repository, rc.caller, taskId, resumeAfter, sink);
    const current = await requireTask(this.repository, rc.caller, taskId, 0);
    refuseTerminal(current.task, "subscribe to");
    const feed = new TaskFeed(this.options.hub, sink, undefined);
    const stored = await feed.attachWithSnapshot(taskId, () => this.repository.get(rc.caller, taskId));
    if (!stored) throw new TaskNotFoundError(taskId);
    return { close: () => feed.close() };
  }

  async getTask(rc: RequestContext, taskId: string, historyLength: number | undefined): Promise<Task> {
    return (await requireTask(this.repository, rc.caller, taskId, historyLength)).task;
  }

  async listTasks(rc: RequestContext, request: ListTasksRequest): Promise<ListTasksResponse> {
    const statusMicrosAtLeast = request.statusTimestampAfter ? microsAtLeast(request.statusTimestampAfter) : undefined;
    const state = request.status === TaskState.UNSPECIFIED ? undefined : request.status;
    const contextId = request.contextId === "" ? undefined : request.contextId;
    const filters = JSON.stringify([contextId ?? null, state ?? null, statusMicrosAtLeast ?? null]);
    const after = request.pageToken === "" ? undefined : this.options.pageTokens.decode(request.pageToken, filters);
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const page = await this.repository.list(rc.caller, {
      contextId,
      state,
      statusMicrosAtLeast,
      pageSize,
      after,
      historyLength: request.historyLength,
      includeArtifacts: request.includeArtifacts ?? false,
    });
    const fitted = this.options.sizes ? fitToReply(page, this.options.sizes) : page;
    return create(ListTasksResponseSchema, {
      tasks: fitted.tasks,
      nextPageToken: fitted.next ? this.options.pageTokens.encode(fitted.next, filters) : "",
      pageSize,
      totalSize: page.totalSize,
    });
  }

  /** R-CANCEL / A-4: CANCELED is idempotent; other terminal states are not cancelable. */
  async cancelTask(rc: RequestContext, taskId: string, metadata: JsonObject | undefined): Promise<Task> {
    const stored = await requireTask(this.repository, rc.caller, taskId, undefined);
    const state = stored.task.status!.state;
    if (state === TaskState.CANCELED) return stored.task;
    if (isTerminal(state)) throw new TaskNotCancelableError(taskId, stateName(state));
    // CANCELED is queued before the agent learns of the cancel, so whatever the agent writes
    // in reaction to its aborted signal comes after it and is refused by the guard.
    const writer = this.#registry.writerFor(rc.caller, stored);
    const canceled = writer.write({ kind: "status", status: serverStatus(this.clock, TaskState.CANCELED, undefined, stored.task) });
    writer.run?.stop("the task was canceled");
    await this.runCancelHook(stored.task, rc.caller, metadata);
    try {
      await canceled;
    } catch (error) {
      if (!(error instanceof IllegalTransitionError)) throw error;
      // The task settled first (the agent finished, or another cancel won): answer from what it is now.
      const now = await requireTask(this.repository, rc.caller, taskId, undefined);
      const nowState = now.task.status!.state;
      if (nowState === TaskState.CANCELED) return now.task;
      throw new TaskNotCancelableError(taskId, stateName(nowState));
    }
    return (await requireTask(this.repository, rc.caller, taskId, undefined)).task;
  }

  /**
   * Restart semantics: tasks left SUBMITTED or WORKING by a previous process are resumed when the
   * agent can resume, otherwise failed with a status message that says the server restarted.
   */
  async recoverInterruptedWork(): Promise<{ resumed: number; failed: number }> {
    const leases = this.options.leases;
    // With replicas: only tasks whose owner is gone (its lease ran out), now held by this process.
    const active = await (leases !== undefined ? leases.orphans() : this.repository.listActive());
    let resumed = 0;
    let failed = 0;
    for (const { scope, task } of active) {
      if (this.#registry.runOf(task.task.id) !== undefined) continue; // this process runs it
      if (this.options.agent.resume) {
        this.#launcher.resume(scope, task);
        resumed++;
        continue;
      }
      await this.#registry
        .writerFor(scope, task)
        .write({
          kind: "status",
          status: serverStatus(
            this.clock,
            TaskState.FAILED,
            "the server restarted while this task was running; send the request again to start a new task",
            task.task,
          ),
        })
        .then(
          () => failed++,
          (error) => this.options.logger.warn({ err: error, task_id: task.task.id }, "could not settle a task left running by a restart"),
        );
    }
    return { resumed, failed };
  }

  /**
   * Shutdown (issue 33 finding 15): no new runs; the runs in flight get up to `graceMs` to finish
   * on their own; then the agents still working are stopped. Their tasks are FAILED with a status
   * that says the server shut down, so that every stream watching them gets that final status and
   * ends, and no task is left WORKING with no one to finish it. An agent that can resume keeps its
   * tasks WORKING instead: its run ends, which gives up the task's lease at once, so another replica
   * resumes it on its next orphan sweep (PostgreSQL), or the next start does (one process alone).
   * Calling it again returns the same promise.
   */
  shutdown(graceMs: number): Promise<void> {
    this.#shuttingDown ??= this.#stopRuns(graceMs);
    return this.#shuttingDown;
  }

  #shuttingDown: Promise<void> | undefined;

  async #stopRuns(graceMs: number): Promise<void> {
    this.#launcher.stopping = true;
    const running = this.#registry.running();
    if (running.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled(running.map((run) => run.done)), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
    }
    const left = this.#registry.running();
    // Settled first, then stopped: the server's word is the task's last, whatever the agent does when told to stop.
    if (!this.options.agent.resume) await Promise.allSettled(left.map((run) => run.settle(TaskState.FAILED, SHUT_DOWN_MESSAGE)));
    for (const run of left) run.stop("the server is shutting down");
    // A store that commits later publishes after the write returned: the streams hear the last states before the server closes them.
    await Promise.all(running.map((run) => published(run.taskWriter)));
  }

  /** Runs in flight; for tests and metrics. */
  get runningCount(): number {
    return this.#registry.runningCount;
  }

  private async runCancelHook(task: Task, caller: Caller, metadata: JsonObject | undefined): Promise<void> {
    const hook = this.options.agent.cancel;
    if (!hook) return;
    const timeout = this.options.cancelHookTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([hook.call(this.options.agent, task, caller, metadata), new Promise((resolve) => (timer = setTimeout(resolve, timeout)))]);
    } catch (error) {
      this.options.logger.warn({ err: error, task_id: task.id }, "the agent's cancel hook failed; canceling anyway");
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Resolves once the settled state `writer` accepted is published (at once when there is none to wait for). */
function published(writer: RunWriter | undefined): Promise<void> {
  if (writer === undefined || writer.settled || !isSettled(writer.state) || writer.commitFailure !== undefined) return Promise.resolve();
  return new Promise((resolve) => writer.onSettled(resolve));
}
