/**
 * Small helpers shared by the end-to-end suite: request builders, scripted agents, and
 * readers for the rich error trailer (google.rpc.Status in grpc-status-details-bin).
 */
import * as grpc from "@grpc/grpc-js";
import { BadRequest, ErrorInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import {
  Role,
  TaskState,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type SendMessageResponse,
  type Task,
} from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { Agent, AgentCardContribution, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { unary } from "../foundation/helpers.js";
import type { A2ATestServer } from "../support/a2a-server.js";

export { Role, TaskState };

let counter = 0;

/** A client message (ROLE_USER, one text part) with a fresh message id. */
export function userMessage(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: `m-${++counter}-${Date.now()}`,
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, filename: "", mediaType: "" }],
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

export function sendRequest(message: Message | undefined, configuration?: Partial<SendMessageConfiguration>, tenant = ""): SendMessageRequest {
  return {
    tenant,
    message,
    configuration: configuration === undefined ? undefined : { acceptedOutputModes: [], returnImmediately: false, ...configuration },
  };
}

export type Call<Res> = { response?: Res; error?: grpc.ServiceError; headers: grpc.Metadata };

/** The four lifecycle RPCs of one test server, with a2a-version 1.0 unless `md` is given. */
export function rpc(s: A2ATestServer) {
  const c = s.client;
  return {
    send: (req: SendMessageRequest, md = s.metadata()): Promise<Call<SendMessageResponse>> => unary(c, c.sendMessage, req, md),
    get: (req: Partial<GetTaskRequest> & { id: string }, md = s.metadata()): Promise<Call<Task>> => unary(c, c.getTask, { tenant: "", ...req }, md),
    list: (req: Partial<ListTasksRequest> = {}, md = s.metadata()): Promise<Call<ListTasksResponse>> =>
      unary(c, c.listTasks, { tenant: "", contextId: "", status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", ...req }, md),
    cancel: (req: Partial<CancelTaskRequest> & { id: string }, md = s.metadata()): Promise<Call<Task>> => unary(c, c.cancelTask, { tenant: "", ...req }, md),
  };
}

/** Sends `text` and returns the resulting task (fails the test when the answer is not a task). */
export async function sendForTask(s: A2ATestServer, message: Message, configuration?: Partial<SendMessageConfiguration>, tenant = ""): Promise<Task> {
  const { response, error } = await rpc(s).send(sendRequest(message, configuration, tenant));
  if (error) throw new Error(`SendMessage failed: ${error.code} ${error.details}`);
  return taskOf(response!);
}

export function taskOf(response: SendMessageResponse): Task {
  if (response.payload?.$case !== "task") throw new Error(`expected a task payload, got ${response.payload?.$case}`);
  return response.payload.value;
}

export function messageOf(response: SendMessageResponse): Message {
  if (response.payload?.$case !== "message") throw new Error(`expected a message payload, got ${response.payload?.$case}`);
  return response.payload.value;
}

export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
}

/** The decoded google.rpc.Status trailer of an error, if any. */
export function statusDetails(error: grpc.ServiceError): { info?: ErrorInfo; badRequest?: BadRequest } {
  const raw = error.metadata?.get("grpc-status-details-bin")[0];
  if (!(raw instanceof Buffer)) return {};
  const status = Status.decode(raw);
  const out: { info?: ErrorInfo; badRequest?: BadRequest } = {};
  for (const any of status.details) {
    if (any.typeUrl === "type.googleapis.com/google.rpc.ErrorInfo") out.info = ErrorInfo.decode(any.value);
    if (any.typeUrl === "type.googleapis.com/google.rpc.BadRequest") out.badRequest = BadRequest.decode(any.value);
  }
  return out;
}

/** Asserts an A2A error: gRPC code, ErrorInfo reason in the a2a-protocol.org domain, and a message. */
export function expectA2AError(error: grpc.ServiceError | undefined, code: grpc.status, reason: string): ErrorInfo {
  expect(error).toBeDefined();
  expect({ code: error!.code, reason: statusDetails(error!).info?.reason }).toEqual({ code, reason });
  const info = statusDetails(error!).info!;
  expect(info.domain).toBe("a2a-protocol.org");
  expect(error!.details.length).toBeGreaterThan(10);
  return info;
}

/** Asserts INVALID_ARGUMENT with a BadRequest violation on `field` whose description says what to send. */
export function expectBadField(error: grpc.ServiceError | undefined, field: string): string {
  expect(error).toBeDefined();
  expect(error!.code).toBe(grpc.status.INVALID_ARGUMENT);
  const violations = statusDetails(error!).badRequest?.fieldViolations ?? [];
  const hit = violations.find((v) => v.field === field);
  expect({ field: hit?.field, all: violations.map((v) => v.field) }).toMatchObject({ field });
  expect(hit!.description).toMatch(/must|send|set/);
  expect(error!.details).toContain(field);
  return hit!.description;
}

/** A promise the test settles by hand, to control an agent's timing exactly. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

const SKILLS = [
  { id: "test", name: "test", description: "scripted test agent", tags: ["test"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
];

/** A scripted agent: `execute` is the test's, the card has the one skill a card needs. */
export function scriptedAgent(execute: (ctx: AgentContext) => Promise<void>, card: Partial<AgentCardContribution> = {}, extra: Partial<Agent> = {}): Agent {
  return { card: { skills: SKILLS, ...card } as AgentCardContribution, execute, ...extra };
}

/** Metadata without any a2a-version entry (plus any given entries). */
export function bareMetadata(entries: Record<string, string> = {}): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(entries)) md.set(k, v);
  return md;
}

/**
 * One agent for a whole test file: the first word of the user's text picks a behaviour the
 * test registered with `on(word, fn)`; a follow-up carries the same first word.
 */
export function dispatchAgent(card: Partial<AgentCardContribution> = {}, extra: Partial<Agent> = {}) {
  const behaviours = new Map<string, (ctx: AgentContext) => Promise<void>>();
  const agent = scriptedAgent(
    async (ctx) => {
      const text = ctx.message.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join("");
      const word = text.split(/\s+/)[0] ?? "";
      const behaviour = behaviours.get(word);
      if (!behaviour) throw new Error(`no behaviour registered for ${JSON.stringify(word)}`);
      await behaviour(ctx);
    },
    card,
    extra,
  );
  let n = 0;
  return {
    agent,
    /** Registers a behaviour and returns the unique word that triggers it. */
    on(fn: (ctx: AgentContext) => Promise<void>): string {
      const word = `b${++n}`;
      behaviours.set(word, fn);
      return word;
    },
  };
}

/** The text of an artifact's (or any) parts, joined. */
export function partsText(parts: ReadonlyArray<{ content?: { $case: string; value: unknown } }>): string {
  return parts.map((p) => (p.content?.$case === "text" ? (p.content.value as string) : "")).join("");
}
