import { newId } from "../model/ids.js";
import type { JsonObject } from "@bufbuild/protobuf";
import { TaskState, type Artifact, type Message, type Part, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { AgentMisuseError } from "../model/agent-misuse.js";
import type { Answer } from "../ports/answer.js";
import { checkJsonObject } from "../model/json-value.js";
import { agentMessageLiteral, artifactLiteral, newTaskLiteral, taskStatusLiteral, textPartLiteral } from "../model/message-literals.js";
import { partsFromInput } from "../model/part-input.js";
import type { ActiveRunLinks } from "./active-runs.js";
import type { AgentContext, ArtifactInput, Caller, MessageInput, PartInput } from "../ports/agent.js";
import type { StatusClock } from "../model/clock.js";
import type { CoreLogger } from "../ports/logger.js";
import { isTerminal, stateName } from "../model/task-state.js";
import { WRITTEN, type TaskWriter } from "../writes/task-writer.js";

/** What the service provides to a run: how to create and write its task. */
export interface RunHost {
  readonly clock: StatusClock;
  readonly logger: CoreLogger;
  /**
   * Stores a new task and answers its writer, within the call on a store that can; the run's
   * `onCreate` observers run before "created" is published.
   */
  createTask(run: AgentRun, task: Task): Answer<RunWriter>;
}

/** One run: the incoming message, the task it continues (if any), and who asked. */
export interface AgentRunOptions {
  readonly message: Message;
  /** The task a follow-up or a resumed run works on; undefined for a new task (created on the first task update). */
  readonly task: Task | undefined;
  readonly contextId: string;
  readonly referenceTasks: readonly Task[];
  readonly caller: Caller;
  readonly requestedExtensions: readonly string[];
  readonly requestMetadata: JsonObject | undefined;
  /** The writer of `task`, claimed for this run. */
  readonly writer?: RunWriter;
}

export type RunOutcome =
  | { kind: "message"; message: Message }
  | { kind: "task"; writer: RunWriter }
  | { kind: "nothing" }
  /** No answer could be given: the task could not be stored. */
  | { kind: "error"; error: unknown };

const NO_EXTENSIONS: ReadonlySet<string> = new Set<string>();

export { AgentMisuseError };

/**
 * One execution of the agent for one incoming message: the AgentContext the agent sees.
 * It turns the agent's calls into guarded task writes, creates the task on the first task
 * update of a new turn, and resolves `outcome` with the first answer (a message or the task).
 */
/** A task's writer as the runs see it: its `run` slot holds an AgentRun. */
export type RunWriter = TaskWriter<AgentRun>;

export class AgentRun implements AgentContext, ActiveRunLinks {
  // Kept by the service's list of runs in flight (see active-runs.ts).
  activePrev: ActiveRunLinks | undefined = undefined;
  activeNext: ActiveRunLinks | undefined = undefined;
  done: Promise<void> | undefined = undefined;
  /** Extensions the agent activated; a set is made only for agents that activate one. */
  activated: ReadonlySet<string> = NO_EXTENSIONS;
  /** Called with the writer of a new task before its "created" event is published. */
  readonly onCreate: Array<(writer: RunWriter) => void> = [];
  private writer: RunWriter | undefined;
  private answered: "message" | "task" | undefined;
  #answer: RunOutcome | undefined;
  #outcome: Promise<RunOutcome> | undefined;
  #resolveOutcome: ((outcome: RunOutcome) => void) | undefined;

  /** The first answer, once there is one (see `outcome`). */
  get answer(): RunOutcome | undefined {
    return this.#answer;
  }

  /**
   * Resolves with the first answer. Made on demand: with a store that writes synchronously the
   * answer is usually there before anyone asks (read `answer` first), and then no promise is made.
   */
  get outcome(): Promise<RunOutcome> {
    if (this.#outcome === undefined) {
      this.#outcome = this.#answer !== undefined ? Promise.resolve(this.#answer) : new Promise<RunOutcome>((resolve) => (this.#resolveOutcome = resolve));
    }
    return this.#outcome;
  }

  /** The first answer wins; later ones are ignored, as a promise's later resolutions are. */
  private resolveOutcome(outcome: RunOutcome): void {
    if (this.#answer !== undefined) return;
    this.#answer = outcome;
    this.#resolveOutcome?.(outcome);
    this.#resolveOutcome = undefined;
  }
  // Why lazy: an AbortController costs several µs per run and most agents never read their signal.
  private abort: AbortController | undefined;
  private stopReason: Error | undefined;

  private readonly host: RunHost;
  readonly message: Message;
  readonly task: Task | undefined;
  readonly contextId: string;
  readonly referenceTasks: readonly Task[];
  readonly caller: Caller;
  readonly requestedExtensions: readonly string[];
  readonly requestMetadata: JsonObject | undefined;

  constructor(host: RunHost, options: AgentRunOptions) {
    this.host = host;
    this.message = options.message;
    this.task = options.task;
    this.contextId = options.contextId;
    this.referenceTasks = options.referenceTasks;
    this.caller = options.caller;
    this.requestedExtensions = options.requestedExtensions;
    this.requestMetadata = options.requestMetadata;
    if (options.writer) this.adopt(options.writer);
  }

  get signal(): AbortSignal {
    if (this.abort === undefined) {
      this.abort = new AbortController();
      if (this.stopReason !== undefined) this.abort.abort(this.stopReason);
    }
    return this.abort.signal;
  }

  get taskId(): string | undefined {
    return this.writer?.taskId;
  }

  get taskWriter(): RunWriter | undefined {
    return this.writer;
  }

  /** Stops the agent: cancel, or shutdown. */
  stop(reason: string): void {
    if (this.stopReason !== undefined) return; // the first reason stays, as with abort()
    this.stopReason = new Error(reason);
    this.abort?.abort(this.stopReason);
  }

  activateExtension(uri: string): void {
    if (this.activated === NO_EXTENSIONS) this.activated = new Set<string>();
    (this.activated as Set<string>).add(uri);
  }

  async reply(content: MessageInput, options?: { metadata?: JsonObject }): Promise<void> {
    if (this.answered) {
      throw new AgentMisuseError(this.answered === "task" ? "reply() after the task was started: send task updates instead" : "reply() was already called");
    }
    const message = agentMessageLiteral(newId(), this.contextId, "", partsOf(content, "reply()"));
    if (options?.metadata) {
      checkJsonObject(options.metadata, "reply() metadata");
      message.metadata = options.metadata;
    }
    this.answered = "message";
    this.resolveOutcome({ kind: "message", message });
  }

  working(message?: MessageInput): Promise<void> {
    return this.status(TaskState.WORKING, message);
  }
  complete(message?: MessageInput): Promise<void> {
    return this.status(TaskState.COMPLETED, message);
  }
  fail(message?: MessageInput): Promise<void> {
    return this.status(TaskState.FAILED, message);
  }
  reject(message?: MessageInput): Promise<void> {
    return this.status(TaskState.REJECTED, message);
  }
  requireInput(message: MessageInput): Promise<void> {
    return this.status(TaskState.INPUT_REQUIRED, message);
  }
  requireAuth(message: MessageInput): Promise<void> {
    return this.status(TaskState.AUTH_REQUIRED, message);
  }

  artifact(input: ArtifactInput, options?: { append?: boolean; lastChunk?: boolean }): Promise<void> {
    try {
      // Built first: an artifact that cannot be sent is refused before it could create the task.
      const artifact = artifactOf(input);
      // Fresh when nothing of the agent's input is kept by reference (text parts, no metadata or extension list).
      const fresh = input.metadata === undefined && input.extensions === undefined && allText(input.parts);
      const change = { kind: "artifact", artifact, append: options?.append ?? false, lastChunk: options?.lastChunk ?? false, fresh } as const;
      // The task usually exists: write at once, without a closure per chunk.
      const writer = this.writer ?? this.createTaskNow();
      if (writer !== undefined) return this.refusalsLogged(writer.write(change, true), "artifact");
      return this.ensureTask().then((created) => this.refusalsLogged(created.write(change, true), "artifact"));
    } catch (error) {
      return this.refusedAtOnce(error, "artifact"); // a malformed artifact is a rejection, as from an async function
    }
  }

  /** A status change made by the service itself (failure, cancel): no agent misuse checks. */
  async settle(state: TaskState, text: string): Promise<void> {
    const writer = await this.ensureTask();
    if (isTerminal(writer.state)) return;
    await writer.write({ kind: "status", status: this.statusOf(state, [textPartLiteral(text)], writer.taskId) });
  }

  /** The state of this run's task, if it has one. */
  get taskState(): TaskState | undefined {
    return this.writer?.state;
  }

  get hasAnswered(): boolean {
    return this.answered !== undefined;
  }

  /** The agent ended without answering: the caller gets InvalidAgentResponse. */
  finishWithoutAnswer(): void {
    this.resolveOutcome({ kind: "nothing" });
  }

  /** The run ended without an answer because of `error` (its task could not be stored): the caller gets it. */
  finishWithError(error: unknown): void {
    this.resolveOutcome({ kind: "error", error });
  }

  private status(state: TaskState, content: MessageInput | undefined): Promise<void> {
    // Not async: once the task exists, a status update costs no promise besides the write's own.
    try {
      // Built first: a message that cannot be sent is refused before it could create the task.
      const parts =
        content === undefined ? undefined : typeof content === "string" ? [textPartLiteral(content)] : partsFromInput(content, statusPartsName(state));
      const fresh = content === undefined || typeof content === "string" || allText(content);
      const write = (writer: RunWriter) =>
        this.refusalsLogged(writer.write({ kind: "status", status: this.statusOf(state, parts, writer.taskId), fresh }, true), state);
      return this.withWriter(write);
    } catch (error) {
      return this.refusedAtOnce(error, state); // a malformed message is a rejection, as from an async function
    }
  }

  /** An update refused before any write (it cannot be sent, or the task could not be made): logged, then rejected. */
  private refusedAtOnce(error: unknown, event: "artifact" | TaskState): Promise<void> {
    if (error instanceof AgentMisuseError) {
      const what = event === "artifact" ? event : stateName(event);
      this.host.logger.warn(
        { err: error, task_id: this.writer?.taskId, context_id: this.contextId, event: what },
        "refused an agent event that cannot be sent",
      );
    }
    return Promise.reject(error);
  }

  /**
   * A refused agent event is logged here, so it is on record even when the agent catches the
   * error. `event`: "artifact", or the state of a status update (named only if it is logged).
   */
  private refusalsLogged(write: Promise<void>, event: "artifact" | TaskState): Promise<void> {
    if (write === WRITTEN) return write; // accepted already: nothing to log
    // Why catch() and not an async try/await: one promise fewer per agent event.
    return write.catch((error: unknown) => {
      const what = event === "artifact" ? event : stateName(event);
      this.host.logger.warn(
        { err: error, task_id: this.writer?.taskId, context_id: this.contextId, event: what },
        "refused an agent event that breaks the task rules",
      );
      throw error;
    });
  }

  private statusOf(state: TaskState, parts: Part[] | undefined, taskId: string) {
    return taskStatusLiteral(state, parts === undefined ? undefined : agentMessageLiteral(newId(), this.contextId, taskId, parts), this.host.clock.now());
  }

  private creating: Promise<RunWriter> | undefined;

  /** `write` with the task's writer: at once when the task exists or can be made within the call, else once ensureTask() made it. */
  private withWriter(write: (writer: RunWriter) => Promise<void>): Promise<void> {
    const writer = this.writer ?? this.createTaskNow();
    return writer !== undefined ? write(writer) : this.ensureTask().then(write);
  }

  private ensureTask(): Promise<RunWriter> {
    if (this.writer) return Promise.resolve(this.writer);
    if (this.answered === "message") return Promise.reject(new AgentMisuseError("task update after reply(): a message-only answer has no task"));
    if (this.creating === undefined) {
      const writer = this.createTaskNow();
      if (writer !== undefined) return Promise.resolve(writer);
    }
    return this.creating!;
  }

  /**
   * The task made within this call, when the store answers at once; else undefined, and
   * `creating` holds the creation to wait for (a failure too: later updates get it).
   */
  private createTaskNow(): RunWriter | undefined {
    if (this.answered === "message" || this.creating !== undefined) return undefined;
    let answer: Answer<RunWriter>;
    try {
      answer = this.host.createTask(this, this.newTask());
    } catch (error) {
      answer = Promise.reject(error); // an observer of the creation threw: as a refused creation
    }
    if (!(answer instanceof Promise)) {
      this.adopt(answer);
      return answer;
    }
    this.creating = answer.then((writer) => {
      this.adopt(writer);
      return writer;
    });
    this.creating.catch(() => {}); // whoever waits for it gets the error; no one may
    return undefined;
  }

  /** The new task for this turn: SUBMITTED, with the incoming message (now carrying the ids) as its history. */
  private newTask(): Task {
    const taskId = newId();
    this.message.taskId = taskId;
    this.message.contextId = this.contextId;
    return newTaskLiteral(taskId, this.contextId, taskStatusLiteral(TaskState.SUBMITTED, undefined, this.host.clock.now()), [this.message]);
  }

  private adopt(writer: RunWriter): void {
    this.writer = writer;
    this.answered = "task";
    this.resolveOutcome({ kind: "task", writer });
  }
}

/** What the agent called, to name its parts in errors ("complete() message parts[1]"). */
const STATUS_CALLS: ReadonlyMap<TaskState, string> = new Map([
  [TaskState.WORKING, "working()"],
  [TaskState.COMPLETED, "complete()"],
  [TaskState.FAILED, "fail()"],
  [TaskState.REJECTED, "reject()"],
  [TaskState.INPUT_REQUIRED, "requireInput()"],
  [TaskState.AUTH_REQUIRED, "requireAuth()"],
]);

function statusPartsName(state: TaskState): string {
  return `${STATUS_CALLS.get(state) ?? stateName(state)} message parts`;
}

/**
 * The parts of an agent message: a string is one text part. Agent-authored messages get a
 * server-made id and carry context and task ids (R-SEND-13, R-SEND-14).
 */
function partsOf(content: MessageInput, what: string): Part[] {
  return typeof content === "string" ? [textPartLiteral(content)] : partsFromInput(content, `${what} parts`);
}

function artifactOf(input: ArtifactInput): Artifact {
  if (input.metadata !== undefined) checkJsonObject(input.metadata, "artifact() metadata");
  return artifactLiteral({
    artifactId: input.artifactId ?? newId(),
    name: input.name ?? "",
    description: input.description ?? "",
    parts: partsFromInput(input.parts, "artifact() parts"),
    metadata: input.metadata,
    extensions: input.extensions ?? [],
  });
}

/** Parts given as plain strings become new text parts: nothing of the agent's is kept by reference. */
function allText(parts: readonly PartInput[]): boolean {
  for (const part of parts) if (typeof part !== "string") return false;
  return true;
}
