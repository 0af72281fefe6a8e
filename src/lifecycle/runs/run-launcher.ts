import type { Message, SendMessageRequest, Task, TaskPushNotificationConfig } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { Role, TaskState } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { cloneMessage, cloneTask } from "../../codec/task-clone.js";
import { AgentRun, type RunHost } from "./agent-run.js";
import { whenAnswered, type Answer } from "../ports/answer.js";
import type { Agent, Caller } from "../ports/agent.js";
import type { StatusClock } from "../model/clock.js";
import { A2AError, ContentTypeNotSupportedError, InvalidRequestError, UnsupportedOperationError } from "../model/errors.js";
import { newId } from "../model/ids.js";
import type { CoreLogger } from "../ports/logger.js";
import { acceptsMediaType, partMediaType } from "../model/media-types.js";
import type { RequestContext } from "../ports/request-context.js";
import type { RunAdmission } from "../ports/run-admission.js";
import type { RunRegistry } from "./run-registry.js";
import { refuseTerminal, requireTask, serverStatus } from "../writes/task-guards.js";
import type { StoredTask, TaskRepository } from "../ports/task-repository.js";
import { isSettled, isTerminal, stateName } from "../model/task-state.js";
import { endRunObservation, invokeObserved, isRunObserved, startRunObservation } from "./run-observation.js";
import type { RunObservation } from "../ports/diagnostics.js";
import type { RunWriter } from "./agent-run.js";

export interface RunLauncherOptions {
  readonly repository: TaskRepository;
  readonly registry: RunRegistry;
  readonly agent: Agent;
  readonly logger: CoreLogger;
  readonly clock: StatusClock;
  /** Media types accepted in incoming parts (R-SEND-9); empty = anything. */
  readonly acceptedInputMediaTypes?: readonly string[];
  /**
   * Registers SendMessage's inline push config for the task the call creates (called as the
   * task is created, in the same turn, so the config commits with it) or continues (before the
   * follow-up is written). Unset: push is off, and the edge refuses inline configs.
   */
  readonly attachInlinePushConfig?: AttachInlinePushConfig;
  /** Limits on agent runs (src/limits); asked before a run writes anything. Undefined = none. */
  readonly runAdmission?: RunAdmission;
}

export type AttachInlinePushConfig = (
  caller: Caller,
  taskId: string,
  config: TaskPushNotificationConfig,
  protocolVersion: RequestContext["protocolVersion"],
) => Promise<void> | undefined;

/** Called once a run is set up and before the agent starts: a stream attaches to the task here. */
export type BeforeAgent = (prepared: { run: AgentRun; existing?: RunWriter }) => Promise<unknown>;

/**
 * Starts agent runs and sees each to its end: admits the message (shutdown, media types), sets up
 * a new task's run or claims an existing task for a follow-up, runs the agent, settles what it
 * left unsettled, then forgets the run. As the runs' RunHost it stores each new task and
 * registers its writer.
 */
export class RunLauncher implements RunHost {
  readonly clock: StatusClock;
  readonly logger: CoreLogger;
  /** Set by shutdown: no new runs, and runs it stopped are left for it to settle. */
  stopping = false;

  constructor(private readonly options: RunLauncherOptions) {
    this.clock = options.clock;
    this.logger = options.logger;
  }

  private get repository(): TaskRepository {
    return this.options.repository;
  }

  private get registry(): RunRegistry {
    return this.options.registry;
  }

  /** Starts the run for `request`'s message: a new task's, or a follow-up's once the task is claimed. */
  async start(rc: RequestContext, request: SendMessageRequest, beforeAgent?: BeforeAgent): Promise<AgentRun> {
    const message = request.message!;
    this.admit(message);
    const release = this.options.runAdmission?.admit(rc.caller);
    try {
      const referenceTasks = message.referenceTaskIds.length === 0 ? [] : await this.referencedTasks(rc.caller, message);
      if (message.taskId === "") {
        const run = this.newTaskRun(rc, request, referenceTasks);
        await beforeAgent?.({ run });
        this.launch(run, false, release);
        return run;
      }
      return await this.continueTask(rc, request, message, referenceTasks, beforeAgent, release);
    } catch (error) {
      release?.(); // refused before its run started: the slot goes back
      throw error;
    }
  }

  /** Starts a run for a message that opens a new task and needs no lookup first: within the call. */
  startNewTask(rc: RequestContext, request: SendMessageRequest): AgentRun {
    this.admit(request.message!);
    const release = this.options.runAdmission?.admit(rc.caller);
    const run = this.newTaskRun(rc, request, []);
    this.launch(run, false, release);
    return run;
  }

  /** Resumes the run of a task left running by a previous process (the agent has resume()). */
  resume(scope: Caller, stored: StoredTask): void {
    const task = stored.task;
    const writer = this.registry.writerFor(scope, stored);
    const run = new AgentRun(this, {
      message: lastUserMessage(task),
      task,
      contextId: task.contextId,
      referenceTasks: [],
      caller: scope,
      requestedExtensions: [],
      requestMetadata: undefined,
      writer,
    });
    this.registry.attach(writer, run); // a cancel stops it, and a follow-up waits for it, as for any run
    this.launch(run, true);
  }

  // RunHost: called by a run on its first task update.
  createTask(run: AgentRun, task: Task): Answer<RunWriter> {
    // The store is handed its own object, so it copies nothing. Unless a stream watches the
    // creation, no one can see "created": a new id has no listener but a stream's, and a
    // subscriber needs the task stored (committed) before it can attach. So the store may keep
    // `task` itself, once its history holds a copy of the incoming message, which the agent keeps
    // as ctx.message. Watched, the store gets a copy, and `task` stays the run's own for "created".
    let kept = task;
    if (run.onCreate.length > 0) kept = cloneTask(task);
    else task.history = task.history.map((message) => (message === run.message ? cloneMessage(message) : message));
    return whenAnswered(this.repository.create(run.caller, kept, true), (stored) => this.created(run, { task, version: stored.version }));
  }

  /** A run's new task is stored: its writer, the run on record, the observers told, "created" announced. */
  private created(run: AgentRun, stored: StoredTask): RunWriter {
    const { task } = stored;
    const writer = this.registry.writerFor(run.caller, stored);
    this.registry.attach(writer, run); // with replicas, the store leased the new task to this process
    for (const observe of run.onCreate) observe(writer);
    writer.announceCreated(task);
    return writer;
  }

  /** Refusals that need no stored state: shutdown, and media types the agent does not take. */
  private admit(message: Message): void {
    if (this.stopping) throw new UnsupportedOperationError("the server is shutting down; try again on another instance");
    this.checkMediaTypes(message);
  }

  private newTaskRun(rc: RequestContext, request: SendMessageRequest, referenceTasks: Task[]): AgentRun {
    const message = request.message!;
    if (message.contextId === "") message.contextId = newId();
    const run = new AgentRun(this, {
      message,
      task: undefined,
      contextId: message.contextId,
      referenceTasks,
      caller: rc.caller,
      requestedExtensions: rc.requestedExtensions,
      requestMetadata: request.metadata,
    });
    const inline = request.configuration?.taskPushNotificationConfig;
    const attach = this.options.attachInlinePushConfig;
    if (inline !== undefined && attach !== undefined) {
      run.onCreate.push((writer) =>
        attach(rc.caller, writer.taskId, inline, rc.protocolVersion)?.catch((error: unknown) =>
          this.logger.error({ err: error, task_id: writer.taskId }, "could not store the inline push config"),
        ),
      );
    }
    return run;
  }

  /** A follow-up on an existing task (R-SEND-10..12, R-CTX-4, R-CTX-5). */
  private async continueTask(
    rc: RequestContext,
    request: SendMessageRequest,
    message: Message,
    referenceTasks: Task[],
    beforeAgent?: BeforeAgent,
    release?: () => void,
  ): Promise<AgentRun> {
    const taskId = message.taskId;
    if (this.registry.runOf(taskId) !== undefined) {
      await requireTask(this.repository, rc.caller, taskId, 0); // unknown to this caller stays NOT_FOUND
      throw new UnsupportedOperationError(`task ${taskId} is still being worked on; send a follow-up when it asks for input`, { task_id: taskId });
    }
    let stored = await requireTask(this.repository, rc.caller, taskId, undefined);
    if (message.contextId !== "" && message.contextId !== stored.task.contextId) {
      throw InvalidRequestError.field(
        "message.context_id",
        `does not match the context of task ${taskId} (${stored.task.contextId}); leave it empty or send the task's context id`,
      );
    }
    refuseTerminal(stored.task, "send a message to");
    if (isSettled(stored.task.status!.state) && this.registry.runOf(taskId) === undefined) {
      if (!(await this.registry.claim(rc.caller, taskId))) {
        throw new UnsupportedOperationError(`task ${taskId} is being worked on by another instance; send a follow-up when it asks for input`, {
          task_id: taskId,
        });
      }
      // Another process may have run a whole turn between the read above and the claim: the
      // agent gets the task as it is now that it is ours, with that turn's messages and outputs.
      if (this.registry.sharesTasks) {
        stored = await requireTask(this.repository, rc.caller, taskId, undefined);
        refuseTerminal(stored.task, "send a message to");
      }
    }
    const task = stored.task;
    const state = task.status!.state;
    if (!isSettled(state) || this.registry.runOf(taskId) !== undefined) {
      throw new UnsupportedOperationError(`task ${taskId} is ${stateName(state)}; send a follow-up when it asks for input`, { task_id: taskId });
    }
    message.contextId = task.contextId;
    const writer = this.registry.writerFor(rc.caller, stored);
    const run = new AgentRun(this, {
      message,
      task,
      contextId: task.contextId,
      referenceTasks,
      caller: rc.caller,
      requestedExtensions: rc.requestedExtensions,
      requestMetadata: request.metadata,
      writer,
    });
    this.registry.attach(writer, run); // claimed: a second follow-up now gets UNSUPPORTED_OPERATION
    try {
      const inline = request.configuration?.taskPushNotificationConfig;
      if (inline !== undefined) await this.options.attachInlinePushConfig?.(rc.caller, taskId, inline, rc.protocolVersion);
      await writer.write({ kind: "history", message });
      await writer.write({ kind: "status", status: serverStatus(this.clock, TaskState.WORKING, undefined, task) });
      task.history.push(message);
      await beforeAgent?.({ run, existing: writer });
    } catch (error) {
      this.registry.detach(writer);
      this.registry.dropIfIdle(writer);
      throw error;
    }
    this.launch(run, false, release);
    return run;
  }

  /** `release`: the run's admission slot, given back once the run has ended. */
  private launch(run: AgentRun, resume: boolean, release?: () => void): void {
    this.registry.started(run, this.execute(run, resume, release));
  }

  /**
   * Runs the agent, settles what it left unsettled, then forgets the run and gives its slot back.
   * Never rejects. The agent is called now; the rest happens after it, in a later microtask (so the
   * run is registered by the time it ends). Why a then and not async/await: while async hooks run
   * (tracing on) an await makes a promise of its own and each costs the hooks' work; this is one
   * promise per run where the async function with its await and the release's then were three.
   */
  private execute(run: AgentRun, resume: boolean, release: (() => void) | undefined): Promise<void> {
    const agent = this.options.agent;
    const observation = isRunObserved() ? startRunObservation(run, resume) : undefined;
    const invoke = () => (resume && agent.resume ? agent.resume(run) : agent.execute(run));
    let running: Promise<void>;
    try {
      running = Promise.resolve(observation === undefined ? invoke() : invokeObserved(observation, invoke));
    } catch (error) {
      running = Promise.reject(error);
    }
    const after = (failure: unknown) => this.afterAgent(run, observation, failure, release);
    return running.then(
      () => after(undefined),
      (error: unknown) => after(error ?? new Error("the agent threw without an error")),
    );
  }

  /** What execute() does once the agent has returned (failure undefined) or thrown. */
  private afterAgent(run: AgentRun, observation: RunObservation | undefined, failure: unknown, release: (() => void) | undefined): Promise<void> | undefined {
    if (observation !== undefined) endRunObservation(observation, run, failure !== undefined);
    const ended = () => {
      this.registry.ended(run);
      release?.();
    };
    let settling: Promise<void> | undefined;
    try {
      settling = this.finishRun(run, failure);
    } catch (error) {
      this.settleFailed(run, error);
    }
    if (settling === undefined) return void ended(); // usually nothing is left to settle
    return settling.then(ended, (error: unknown) => {
      this.settleFailed(run, error);
      ended();
    });
  }

  private settleFailed(run: AgentRun, error: unknown): void {
    this.logger.error({ err: error, task_id: run.taskId }, "could not settle the task after the agent ended");
    // A caller still waiting for the first answer gets the error instead of waiting forever.
    if (!run.hasAnswered) run.finishWithError(error);
  }

  /** After the agent returned or threw: what still has to be written to leave its task consistent and settled, if anything. */
  private finishRun(run: AgentRun, failure: unknown): Promise<void> | undefined {
    const refused = failure !== undefined && !run.hasAnswered && isRefusal(failure);
    if (failure !== undefined && !refused) this.logger.warn({ err: failure, task_id: run.taskId, context_id: run.contextId }, "the agent failed");
    if (!run.hasAnswered) {
      if (failure === undefined) {
        run.finishWithoutAnswer();
        return undefined;
      }
      // An A2A error before any answer refuses the call: the caller gets its status, no task is made.
      if (refused) {
        run.finishWithError(failure);
        return undefined;
      }
      return run.settle(TaskState.FAILED, `the agent failed: ${describeError(failure)}`);
    }
    const state = run.taskState;
    if (state === undefined || isTerminal(state)) return;
    if (this.stopping && run.signal.aborted) return; // shutdown decides
    if (failure !== undefined) return run.settle(TaskState.FAILED, `the agent failed: ${describeError(failure)}`);
    if (!isSettled(state)) return run.settle(TaskState.FAILED, "the agent stopped without finishing the task");
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
}

function lastUserMessage(task: Task): Message {
  for (let i = task.history.length - 1; i >= 0; i--) if (task.history[i]!.role === Role.USER) return task.history[i]!;
  return task.history[task.history.length - 1]!;
}

/** What an agent throws to refuse a call (see Agent.execute): an A2A error, or request validation. */
function isRefusal(error: unknown): boolean {
  return error instanceof A2AError || error instanceof InvalidRequestError;
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
