import { create, type JsonObject } from "@bufbuild/protobuf";
import { newId } from "./ids.js";
import {
  ListTasksResponseSchema,
  MessageSchema,
  Role,
  TaskStatusSchema,
  type TaskStatus,
  StreamResponseSchema,
  TaskState,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type SendMessageResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { EventHub } from "../events/event-hub.js";
import type { Agent, Caller } from "./agent.js";
import { ActiveRuns } from "./active-runs.js";
import { AgentRun, type RunHost } from "./agent-run.js";
import { StatusClock, microsAtLeast } from "./clock.js";
import {
  ContentTypeNotSupportedError,
  InvalidAgentResponseError,
  InvalidRequestError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "./errors.js";
import { sendMessageResponseLiteral } from "./message-literals.js";
import type { CoreLogger } from "./logger.js";
import { acceptsMediaType, partMediaType } from "./media-types.js";
import type { PageTokenCodec } from "./page-token.js";
import { TaskFeed, type StreamSink } from "./task-feed.js";
import { resumeStream } from "./stream-resume.js";
import { cloneMessage } from "../codec/task-clone.js";
import { IllegalTransitionError, type ReadOptions, type StoredTask, type TaskRepository } from "./task-repository.js";
import { isSettled, isTerminal, stateName } from "./task-state.js";
import { TaskWriter } from "./task-writer.js";

/** Who is calling and with which extensions; built by the protocol edge for every request. */
export interface RequestContext {
  readonly caller: Caller;
  readonly requestedExtensions: readonly string[];
  /** Extensions the agent used while answering; the edge echoes them (R-EXT-5). */
  readonly activatedExtensions: Set<string>;
  /** Aborted when the client goes away: a blocking wait stops waiting (the task goes on). */
  readonly signal?: AbortSignal;
  /**
   * The same news as `signal`'s abort event, preferred when given: registers a listener for
   * the client going away from now on and returns its remover. Why: no AbortSignal to build
   * (several µs per call) when the edge can report the end of a call directly.
   */
  readonly onGone?: (listener: (reason: unknown) => void) => () => void;
}

export interface TaskServiceOptions {
  readonly repository: TaskRepository;
  readonly hub: EventHub;
  readonly agent: Agent;
  readonly pageTokens: PageTokenCodec;
  readonly logger: CoreLogger;
  readonly clock?: StatusClock;
  /** Media types accepted in incoming parts (R-SEND-9); empty = anything. */
  readonly acceptedInputMediaTypes?: readonly string[];
  /** How long an agent's cancel() hook may take before the task is canceled anyway. */
  readonly cancelHookTimeoutMs?: number;
}

export interface StreamHandle {
  /** The client went away: stop delivering. The task is not affected (R-STREAM-9). */
  close(): void;
}

const DEFAULT_PAGE_SIZE = 50;

/**
 * The task lifecycle behind the RPCs: it starts agent runs, owns every write to a task while
 * this process works on it, answers blocking, non-blocking and streaming callers from the
 * same events, and enforces the protocol rules that need stored state (existence, terminal
 * tasks, context ids, cancelation). It knows nothing of gRPC.
 */
export class TaskService implements RunHost {
  readonly clock: StatusClock;
  readonly logger: CoreLogger;
  /**
   * The writer of every task this process is working on or watching, with the run working on
   * it (TaskWriter.run). Why the run on the writer and not a Map of its own: a second Map set
   * and emptied on every call reallocated its table each time it emptied.
   */
  private readonly writers = new Map<string, TaskWriter>();
  /** Runs in flight, each with the promise that ends when it has finished. */
  private readonly activeRuns = new ActiveRuns<AgentRun>();
  private shuttingDown = false;

  constructor(private readonly options: TaskServiceOptions) {
    this.clock = options.clock ?? new StatusClock();
    this.logger = options.logger;
  }

  private get repository(): TaskRepository {
    return this.options.repository;
  }

  sendMessage(rc: RequestContext, request: SendMessageRequest): Promise<SendMessageResponse> {
    const message = request.message!;
    if (message.taskId !== "" || message.referenceTaskIds.length > 0) return this.startRun(rc, request).then((run) => this.answer(rc, request, run));
    // The usual message (a new task, no references) starts its run without a microtask, and is
    // usually answered within the call: then no await, and one promise for the whole reply.
    let run: AgentRun;
    try {
      run = this.launchNewRun(rc, request, []);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.answer(rc, request, run);
  }

  /** The reply to SendMessage once `run` has answered: the message, or the task (once settled, unless asked not to wait). */
  private answer(rc: RequestContext, request: SendMessageRequest, run: AgentRun): Promise<SendMessageResponse> {
    const outcome = run.answer;
    if (outcome === undefined) return run.outcome.then(() => this.answer(rc, request, run));
    try {
      this.collectExtensions(rc, run);
      if (outcome.kind === "nothing") throw agentGaveNoAnswer();
      if (outcome.kind === "error") throw outcome.error;
      if (outcome.kind === "message") return Promise.resolve(sendMessageResponseLiteral({ case: "message", value: outcome.message }));
      const writer = outcome.writer;
      if (request.configuration?.returnImmediately || writer.settled) return this.taskReply(rc, request, run, writer);
      return this.taskReplyWhenSettled(rc, request, run, writer);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The task reply once the task is settled, or its client has gone (the reply then holds the
   * task as it is, and will likely not be read; the task goes on). Why a callback on the writer
   * and not a promise to await: one promise per blocking call instead of three.
   */
  private taskReplyWhenSettled(rc: RequestContext, request: SendMessageRequest, run: AgentRun, writer: TaskWriter): Promise<SendMessageResponse> {
    return new Promise<SendMessageResponse>((resolve, reject) => {
      let stopWatching: (() => void) | undefined;
      let ended = false;
      const end = () => {
        if (ended) return; // settled and gone both call it
        ended = true;
        stopWatching?.();
        stopWatching = undefined;
        try {
          resolve(this.readTaskReply(rc, request, run, writer));
        } catch (error) {
          reject(error);
        }
      };
      writer.onSettled(end);
      if (!ended) stopWatching = watchGone(rc, end);
    });
  }

  /** The task reply, read as the task is now. */
  private taskReply(rc: RequestContext, request: SendMessageRequest, run: AgentRun, writer: TaskWriter): Promise<SendMessageResponse> {
    try {
      return Promise.resolve(this.readTaskReply(rc, request, run, writer));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The task reply: at once on a synchronous store (no promise), else once read. Throws when it cannot be given. */
  private readTaskReply(rc: RequestContext, request: SendMessageRequest, run: AgentRun, writer: TaskWriter): SendMessageResponse | Promise<SendMessageResponse> {
    const options = replyReadOptions(request);
    const immediate = this.repository.immediate;
    if (immediate !== undefined) return this.taskResponse(rc, run, writer, immediate.getNow(rc.caller, writer.taskId, options));
    return this.repository.get(rc.caller, writer.taskId, options).then((stored) => this.taskResponse(rc, run, writer, stored));
  }

  /** SendMessage's reply holding the task as read, unless its writes were lost or it is gone. */
  private taskResponse(rc: RequestContext, run: AgentRun, writer: TaskWriter, stored: StoredTask | undefined): SendMessageResponse {
    this.collectExtensions(rc, run);
    if (writer.writeFailure !== undefined) throw writer.writeFailure; // the store could not commit what the agent wrote
    if (!stored) throw new TaskNotFoundError(writer.taskId);
    return sendMessageResponseLiteral({ case: "task", value: stored.task });
  }

  /**
   * Starts a streaming answer. Resolves once the first event went to `sink`; rejects (with
   * nothing sent) when the request is refused, so the edge can end the call with its status.
   */
  async sendStreamingMessage(rc: RequestContext, request: SendMessageRequest, sink: StreamSink): Promise<StreamHandle> {
    const feed = new TaskFeed(this.options.hub, sink, request.configuration?.historyLength);
    const run = await this.startRun(rc, request, (prepared) => {
      if (prepared.existing) return feed.attachWithSnapshot(prepared.existing.taskId, () => this.repository.get(rc.caller, prepared.existing!.taskId));
      prepared.run.onCreate.push((writer) => feed.attachAtCreation(writer.taskId));
      return Promise.resolve(undefined);
    });
    const outcome = await run.outcome;
    this.collectExtensions(rc, run);
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
  private failStreamIfWritesLost(writer: TaskWriter, feed: TaskFeed): void {
    if (writer.settled || this.repository.immediate?.afterCommit === undefined) return;
    writer.onSettled(() => {
      if (writer.writeFailure !== undefined) feed.fail(writer.writeFailure);
    });
  }

  /** `resumeAfter`: the version a resume cursor names: the events after it, no snapshot. */
  async subscribeToTask(rc: RequestContext, taskId: string, sink: StreamSink, resumeAfter?: number): Promise<StreamHandle> {
    if (resumeAfter !== undefined) return resumeStream(this.options.hub, this.repository, rc.caller, taskId, resumeAfter, sink);
    const current = await this.requireTask(rc.caller, taskId, 0);
    refuseTerminal(current.task, "subscribe to");
    const feed = new TaskFeed(this.options.hub, sink, undefined);
    const stored = await feed.attachWithSnapshot(taskId, () => this.repository.get(rc.caller, taskId));
    if (!stored) throw new TaskNotFoundError(taskId);
    return { close: () => feed.close() };
  }

  async getTask(rc: RequestContext, taskId: string, historyLength: number | undefined): Promise<Task> {
    return (await this.requireTask(rc.caller, taskId, historyLength)).task;
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
    return create(ListTasksResponseSchema, {
      tasks: page.tasks,
      nextPageToken: page.next ? this.options.pageTokens.encode(page.next, filters) : "",
      pageSize,
      totalSize: page.totalSize,
    });
  }

  /** R-CANCEL / A-4: CANCELED is idempotent; other terminal states are not cancelable. */
  async cancelTask(rc: RequestContext, taskId: string, metadata: JsonObject | undefined): Promise<Task> {
    const stored = await this.requireTask(rc.caller, taskId, undefined);
    const state = stored.task.status!.state;
    if (state === TaskState.CANCELED) return stored.task;
    if (isTerminal(state)) throw new TaskNotCancelableError(taskId, stateName(state));
    // CANCELED is queued before the agent learns of the cancel, so whatever the agent writes
    // in reaction to its aborted signal comes after it and is refused by the guard.
    const writer = this.writerFor(rc.caller, stored);
    const canceled = writer.write({ kind: "status", status: this.serverStatus(TaskState.CANCELED, undefined, stored.task) });
    writer.run?.stop("the task was canceled");
    await this.runCancelHook(stored.task, rc.caller, metadata);
    try {
      await canceled;
    } catch (error) {
      if (!(error instanceof IllegalTransitionError)) throw error;
      // The task settled first (the agent finished, or another cancel won): answer from what it is now.
      const now = await this.requireTask(rc.caller, taskId, undefined);
      const nowState = now.task.status!.state;
      if (nowState === TaskState.CANCELED) return now.task;
      throw new TaskNotCancelableError(taskId, stateName(nowState));
    }
    return (await this.requireTask(rc.caller, taskId, undefined)).task;
  }

  /**
   * Restart semantics: tasks left SUBMITTED or WORKING by a previous process are resumed when the
   * agent can resume, otherwise failed with a status message that says the server restarted.
   */
  async recoverInterruptedWork(): Promise<{ resumed: number; failed: number }> {
    const active = await this.repository.listActive();
    let resumed = 0;
    let failed = 0;
    for (const { scope, task } of active) {
      const writer = this.writerFor(scope, task);
      if (this.options.agent.resume) {
        const run = new AgentRun(this, lastUserMessage(task.task), task.task, task.task.contextId, [], scope, [], undefined, writer);
        writer.run = run; // a cancel stops it, and a follow-up waits for it, as for any run
        this.launch(run, true);
        resumed++;
        continue;
      }
      await writer
        .write({ kind: "status", status: this.serverStatus(TaskState.FAILED, "the server restarted while this task was running; send the request again to start a new task", task.task) })
        .then(() => failed++, (error) => this.options.logger.warn({ err: error, task_id: task.task.id }, "could not settle a task left running by a restart"));
    }
    return { resumed, failed };
  }

  /** Stops every agent run. Tasks still running are failed, unless the agent can resume them after a restart. */
  async shutdown(graceMs: number): Promise<void> {
    this.shuttingDown = true;
    const running = this.activeRuns.runs();
    for (const run of running) run.stop("the server is shutting down");
    const all = Promise.allSettled(running.map((run) => run.done));
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    if (this.options.agent.resume) return;
    await Promise.allSettled(
      this.activeRuns.runs().map((run) => run.settle(TaskState.FAILED, "the server shut down before the task finished; send the request again")),
    );
  }

  /** Runs in flight; for tests and metrics. */
  get runningCount(): number {
    return this.activeRuns.size;
  }

  // RunHost: called by a run on its first task update.
  async createTask(run: AgentRun, task: Task): Promise<TaskWriter> {
    return this.created(run, await this.repository.create(run.caller, task));
  }

  get createsTasksNow(): boolean {
    return this.repository.immediate !== undefined;
  }

  createTaskNow(run: AgentRun, task: Task): TaskWriter {
    const store = this.repository.immediate!;
    if (run.onCreate.length > 0) {
      // A stream watches the creation: the store keeps a copy, and `task` stays the run's own for "created".
      return this.created(run, { task, version: store.createNow(run.caller, task) });
    }
    // No one can see "created": a new id has no listener but a stream's, and a subscriber needs the
    // task stored (committed) before it can attach. So the store may keep `task` itself, once its
    // history holds a copy of the incoming message, which the agent keeps as ctx.message.
    task.history = task.history.map((message) => (message === run.message ? cloneMessage(message) : message));
    const version = store.createNow(run.caller, task, true);
    return this.created(run, { task, version });
  }

  /** A run's new task is stored: its writer, the run on record, the observers told, "created" announced. */
  private created(run: AgentRun, stored: StoredTask): TaskWriter {
    const { task } = stored;
    const writer = this.writerFor(run.caller, stored);
    writer.run = run;
    for (const observe of run.onCreate) observe(writer);
    writer.announceCreated(task);
    return writer;
  }

  private async startRun(
    rc: RequestContext,
    request: SendMessageRequest,
    beforeAgent?: (prepared: { run: AgentRun; existing?: TaskWriter }) => Promise<unknown>,
  ): Promise<AgentRun> {
    const message = request.message!;
    this.admit(message);
    const referenceTasks = message.referenceTaskIds.length === 0 ? [] : await this.referencedTasks(rc.caller, message);
    if (message.taskId === "") {
      const run = this.newRun(rc, request, referenceTasks);
      await beforeAgent?.({ run });
      this.launch(run, false);
      return run;
    }
    return this.continueTask(rc, request, message, referenceTasks, beforeAgent);
  }

  /** Refusals that need no stored state: shutdown, and media types the agent does not take. */
  private admit(message: Message): void {
    if (this.shuttingDown) throw new UnsupportedOperationError("the server is shutting down; try again on another instance");
    this.checkMediaTypes(message);
  }

  /** Starts a run for a message that opens a new task and needs no lookup first. */
  private launchNewRun(rc: RequestContext, request: SendMessageRequest, referenceTasks: Task[]): AgentRun {
    this.admit(request.message!);
    const run = this.newRun(rc, request, referenceTasks);
    this.launch(run, false);
    return run;
  }

  private newRun(rc: RequestContext, request: SendMessageRequest, referenceTasks: Task[]): AgentRun {
    const message = request.message!;
    if (message.contextId === "") message.contextId = newId();
    return new AgentRun(this, message, undefined, message.contextId, referenceTasks, rc.caller, rc.requestedExtensions, request.metadata);
  }

  /** A follow-up on an existing task (R-SEND-10..12, R-CTX-4, R-CTX-5). */
  private async continueTask(
    rc: RequestContext,
    request: SendMessageRequest,
    message: Message,
    referenceTasks: Task[],
    beforeAgent?: (prepared: { run: AgentRun; existing?: TaskWriter }) => Promise<unknown>,
  ): Promise<AgentRun> {
    const taskId = message.taskId;
    if (this.runOf(taskId) !== undefined) {
      await this.requireTask(rc.caller, taskId, 0); // unknown to this caller stays NOT_FOUND
      throw new UnsupportedOperationError(`task ${taskId} is still being worked on; send a follow-up when it asks for input`, { task_id: taskId });
    }
    const stored = await this.requireTask(rc.caller, taskId, undefined);
    const task = stored.task;
    if (message.contextId !== "" && message.contextId !== task.contextId) {
      throw InvalidRequestError.field("message.context_id", `does not match the context of task ${taskId} (${task.contextId}); leave it empty or send the task's context id`);
    }
    refuseTerminal(task, "send a message to");
    const state = task.status!.state;
    if (!isSettled(state) || this.runOf(taskId) !== undefined) {
      throw new UnsupportedOperationError(`task ${taskId} is ${stateName(state)}; send a follow-up when it asks for input`, { task_id: taskId });
    }
    message.contextId = task.contextId;
    const writer = this.writerFor(rc.caller, stored);
    const run = new AgentRun(this, message, task, task.contextId, referenceTasks, rc.caller, rc.requestedExtensions, request.metadata, writer);
    writer.run = run; // claimed: a second follow-up now gets UNSUPPORTED_OPERATION
    try {
      await writer.write({ kind: "history", message });
      await writer.write({ kind: "status", status: this.serverStatus(TaskState.WORKING, undefined, task) });
      task.history.push(message);
      await beforeAgent?.({ run, existing: writer });
    } catch (error) {
      writer.run = undefined;
      this.dropIfIdle(writer);
      throw error;
    }
    this.launch(run, false);
    return run;
  }

  private launch(run: AgentRun, resume: boolean): void {
    this.activeRuns.add(run, this.execute(run, resume));
  }

  /**
   * Runs the agent, settles what it left unsettled, then forgets the run. Never rejects.
   * (The run is in activeRuns by the time it ends: execute() yields at its first await.)
   */
  private async execute(run: AgentRun, resume: boolean): Promise<void> {
    const agent = this.options.agent;
    let failure: unknown;
    try {
      await (resume && agent.resume ? agent.resume(run) : agent.execute(run));
    } catch (error) {
      failure = error ?? new Error("the agent threw without an error");
    }
    try {
      const settling = this.finishRun(run, failure);
      if (settling !== undefined) await settling; // usually nothing is left to settle: no await
    } catch (error) {
      this.options.logger.error({ err: error, task_id: run.taskId }, "could not settle the task after the agent ended");
      // A caller still waiting for the first answer gets the error instead of waiting forever.
      if (!run.hasAnswered) run.finishWithError(error);
    }
    this.runEnded(run);
  }

  private runEnded(run: AgentRun): void {
    this.activeRuns.delete(run);
    const writer = run.taskWriter;
    if (writer === undefined) return;
    if (writer.run === run) writer.run = undefined;
    this.dropIfIdle(writer);
  }

  /** After the agent returned or threw: what still has to be written to leave its task consistent and settled, if anything. */
  private finishRun(run: AgentRun, failure: unknown): Promise<void> | undefined {
    const log = this.options.logger;
    if (failure !== undefined) log.warn({ err: failure, task_id: run.taskId, context_id: run.contextId }, "the agent failed");
    if (!run.hasAnswered) {
      if (failure === undefined) {
        run.finishWithoutAnswer();
        return undefined;
      }
      return run.settle(TaskState.FAILED, `the agent failed: ${describeError(failure)}`);
    }
    const state = run.taskState;
    if (state === undefined || isTerminal(state)) return;
    if (this.shuttingDown && run.signal.aborted) return; // shutdown() decides
    if (failure !== undefined) return run.settle(TaskState.FAILED, `the agent failed: ${describeError(failure)}`);
    if (!isSettled(state)) return run.settle(TaskState.FAILED, "the agent stopped without finishing the task");
  }

  private writerFor(scope: Caller, stored: StoredTask): TaskWriter {
    const existing = this.writers.get(stored.task.id);
    if (existing) return existing;
    const writer = new TaskWriter(this.repository, this.options.hub, scope, stored.task.id, stored.task.contextId, stored.version, stored.task.status!.state, this.writerIdle);
    this.writers.set(stored.task.id, writer);
    return writer;
  }

  /** One function for every writer (not a closure per task). */
  private readonly writerIdle = (writer: TaskWriter): void => this.dropIfIdle(writer);

  /** Forgets `writer` once nothing is left for it to do (it may have been replaced already: then nothing changes). */
  private dropIfIdle(writer: TaskWriter): void {
    if (writer.idle && writer.run === undefined && this.writers.get(writer.taskId) === writer) this.writers.delete(writer.taskId);
  }

  /** The run working on task `taskId` in this process, if any. */
  private runOf(taskId: string): AgentRun | undefined {
    return this.writers.get(taskId)?.run;
  }

  private async requireTask(scope: Caller, taskId: string, historyLength: number | undefined): Promise<StoredTask> {
    const stored = await this.repository.get(scope, taskId, { historyLength });
    if (!stored) throw new TaskNotFoundError(taskId);
    return stored;
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

  private async referencedTasks(scope: Caller, message: Message): Promise<Task[]> {
    const found: Task[] = [];
    for (const id of new Set(message.referenceTaskIds)) {
      const stored = await this.repository.get(scope, id);
      if (stored) found.push(stored.task); // ids the caller cannot see are left out, as if unknown
    }
    return found;
  }

  private checkMediaTypes(message: Message): void {
    const accepted = this.options.acceptedInputMediaTypes ?? [];
    if (accepted.length === 0) return;
    message.parts.forEach((part, index) => {
      const mediaType = partMediaType(part);
      if (mediaType !== undefined && !acceptsMediaType(accepted, mediaType)) {
        throw new ContentTypeNotSupportedError(mediaType, `message.parts[${index}].media_type`, accepted);
      }
    });
  }

  /** A status the service itself sets (resume, restart, cancel), with an optional agent-role explanation. */
  private serverStatus(state: TaskState, text: string | undefined, task: Task): TaskStatus {
    const message =
      text === undefined
        ? undefined
        : create(MessageSchema, { messageId: newId(), contextId: task.contextId, taskId: task.id, role: Role.AGENT, parts: [{ content: { case: "text", value: text } }] });
    return create(TaskStatusSchema, { state, timestamp: this.clock.now(), message });
  }

  private collectExtensions(rc: RequestContext, run: AgentRun): void {
    if (run.activated.size === 0) return; // the usual case: no iterator to make
    for (const uri of run.activated) rc.activatedExtensions.add(uri);
  }
}

/** How SendMessage's reply reads its task: with the history length the request asked for. */
function replyReadOptions(request: SendMessageRequest): ReadOptions {
  return { historyLength: request.configuration?.historyLength };
}

/** Calls `listener` when the request's client goes away (from now on); returns the remover. */
function watchGone(rc: RequestContext, listener: (reason: unknown) => void): () => void {
  if (rc.onGone) return rc.onGone(listener);
  const signal = rc.signal;
  if (!signal) return () => {};
  const onAbort = () => listener(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

function refuseTerminal(task: Task, action: string): void {
  const state = task.status!.state;
  if (isTerminal(state)) {
    throw new UnsupportedOperationError(`task ${task.id} is ${stateName(state)}: a finished task never changes; cannot ${action} it. Start a new task in the same context instead.`, {
      task_id: task.id,
      state: stateName(state),
    });
  }
}

function agentGaveNoAnswer(): InvalidAgentResponseError {
  return new InvalidAgentResponseError("the agent ended without answering: it sent neither a message nor a task");
}

function lastUserMessage(task: Task): Message {
  for (let i = task.history.length - 1; i >= 0; i--) if (task.history[i]!.role === Role.USER) return task.history[i]!;
  return task.history[task.history.length - 1]!;
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

