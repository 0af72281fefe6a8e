import type { JsonObject } from "@bufbuild/protobuf";
import type { AgentCard, AgentExtension, Artifact, Message, Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { PartInput } from "../model/part-input.js";
import type { TaskScope } from "./task-repository.js";

/**
 * The contract between the service and a user's agent. An agent module's default
 * export is an `Agent` (or a factory returning one); see README "Plugging in an agent".
 */
export interface Agent {
  /**
   * Card fields this agent contributes (name, description, skills, modes, extensions).
   * Interfaces and capabilities that the server decides are filled in by the server.
   */
  readonly card?: AgentCardContribution;
  /**
   * Handles one incoming message. Answer with `ctx.reply(...)` (a message, no task), or
   * work on the task: `ctx.working()`, `ctx.artifact(...)`, and end with `ctx.complete()`,
   * `ctx.fail()`, `ctx.reject()`, or pause with `ctx.requireInput()` / `ctx.requireAuth()`.
   * An A2A error (`InvalidParamsError`, `UnsupportedOperationError`, ...) thrown before the
   * first answer refuses the call: the client gets its status and no task is made. Any other
   * error, or one thrown once the task exists, fails the task with a readable status message.
   * When the returned promise resolves or rejects, the task must be terminal or interrupted, or it is failed.
   */
  execute(ctx: AgentContext): Promise<void>;
  /**
   * Called when a client cancels a task that is running or interrupted, with the
   * CancelTaskRequest metadata. A running task's `ctx.signal` is aborted as well. The task
   * ends CANCELED either way; a hook that fails or takes over 5 s does not stop that. Optional.
   */
  cancel?(task: Task, caller: Caller, metadata: JsonObject | undefined): Promise<void>;
  /**
   * Tasks left SUBMITTED or WORKING by a restart are failed, unless the agent declares it
   * can resume them: then `resume` is called with a context for the task. Optional.
   */
  resume?(ctx: AgentContext): Promise<void>;
}

/**
 * Who calls, as the edge verified it (README "Authentication"). Tasks are scoped by tenant and
 * principal; the rest lets an agent decide per skill.
 */
export interface Caller extends TaskScope {
  /** How the caller proved who it is: "jwt", "api-key", "mtls"; undefined for anonymous callers. */
  readonly scheme?: string;
  /** Scopes its credential grants. */
  readonly scopes?: readonly string[];
  /** A JWT's verified claims. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

export type AgentCardContribution = Partial<
  Pick<AgentCard, "name" | "description" | "version" | "skills" | "defaultInputModes" | "defaultOutputModes" | "provider" | "documentationUrl" | "iconUrl">
> & {
  /** Extensions this agent understands; `required: true` ones must be requested by clients. */
  readonly extensions?: AgentExtension[];
  /** The extended card (R-XCARD); served only when set. */
  readonly extendedCard?: Partial<AgentCard>;
  /** Media types accepted in incoming parts; empty or undefined = anything. */
  readonly acceptedInputMediaTypes?: readonly string[];
};

export type { PartInput, PartFields, PartContentInput } from "../model/part-input.js";
/** A string is one text part; otherwise the parts (strings, or what `textPart` / `dataPart` / `filePart` make). */
export type MessageInput = string | PartInput[];

export interface ArtifactInput {
  /** Generated when absent. */
  readonly artifactId?: string;
  readonly name?: string;
  readonly description?: string;
  readonly parts: PartInput[];
  readonly metadata?: JsonObject;
  readonly extensions?: string[];
}

export interface AgentContext {
  /** The incoming message, as recorded. */
  readonly message: Message;
  /** The task this message continues, with its history; undefined for a new conversation turn. */
  readonly task: Task | undefined;
  readonly contextId: string;
  /** Tasks named in message.reference_task_ids that the caller can see. */
  readonly referenceTasks: readonly Task[];
  readonly caller: Caller;
  /** Extension URIs the client asked for (a2a-extensions). */
  readonly requestedExtensions: readonly string[];
  /** SendMessageRequest.metadata. */
  readonly requestMetadata: JsonObject | undefined;
  /** Aborted when the task is canceled or the server shuts down. */
  readonly signal: AbortSignal;
  /** Marks an extension as used in this answer; it is echoed in the response's a2a-extensions. */
  activateExtension(uri: string): void;

  /** Answers with a Message and no task. Only before any task update. */
  reply(content: MessageInput, options?: { metadata?: JsonObject }): Promise<void>;
  /** The current task id (created on the first task update for a new turn). */
  readonly taskId: string | undefined;
  working(message?: MessageInput): Promise<void>;
  artifact(artifact: ArtifactInput, options?: { append?: boolean; lastChunk?: boolean }): Promise<void>;
  complete(message?: MessageInput): Promise<void>;
  fail(message?: MessageInput): Promise<void>;
  reject(message?: MessageInput): Promise<void>;
  requireInput(message: MessageInput): Promise<void>;
  requireAuth(message: MessageInput): Promise<void>;
}

/** Artifact as given to `ctx.artifact`, after defaults. */
export type { Artifact };
