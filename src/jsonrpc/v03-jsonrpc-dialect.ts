import { create, type JsonValue, type Message } from "@bufbuild/protobuf";
import {
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  type AgentCard,
  type GetTaskPushNotificationConfigRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type SendMessageResponse,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { InvalidRequestError, TaskNotFoundError, UnsupportedOperationError } from "../lifecycle/index.js";
import { A2A_V03_SERVICE } from "../service/call-observer.js";
import { asV03Call, type CallContext, type ServerStreamHandler, type StreamWriter, type UnaryHandler } from "../service/face.js";
import {
  cancelTaskRequestFromV03,
  deletePushConfigRequestFromV03,
  getPushConfigParamsFromV03,
  getTaskRequestFromV03,
  listPushConfigsRequestFromV03,
  sendMessageRequestFromV03,
  setPushConfigRequestFromV03,
  subscribeRequestFromV03,
} from "../v03/json/v03-json-to-v1.js";
import { finalStatusUpdateToV03, pushConfigToV03, sendMessageResultToV03, streamEventToV03, taskToV03 } from "../v03/json/v1-to-v03-json.js";
import { toV03CardJson } from "../v03/card/index.js";
import { checkV03Version } from "../v03/v03-service-version.js";
import { resubscribeAsV03, streamAsV03, type V03StreamForm } from "../v03/v03-stream.js";
import type { DialectMethod, FaceCall, JsonRpcDialect, StreamResult } from "./jsonrpc-dialect.js";
import { METHODS } from "./jsonrpc-envelope.js";

/*
 * The A2A v0.3 dialect of the JSON-RPC binding (issue 35 item 2, R-V03-10): the `category/action`
 * methods with the v0.3 JSON model. Each method translates its params to the v1.0 request
 * (src/v03/json), calls the v1.0 face with the call marked as v0.3 (asV03Call: push configs
 * remember it, R-V03-70), and translates the answer back; the core never sees v0.3. Service
 * parameters: A2A-Version absent/empty/0.3, extensions from X-A2A-Extensions or
 * A2A-Extensions, echoed in X-A2A-Extensions (R-BIND-10, R-BIND-14).
 */

export interface V03DialectOptions {
  /** The 1.0 JSON-RPC endpoint's path, named in the errors that send a 1.0 client there; null when off. */
  readonly v1Path: string | null;
}

export function createV03Dialect(options: V03DialectOptions): JsonRpcDialect {
  const methods = v03Methods();
  const where = options.v1Path === null ? "an A2A 1.0 endpoint" : `the A2A 1.0 endpoint ${options.v1Path}`;
  const refusal = (shown: string) =>
    `A2A-Version ${shown} is not served here: this endpoint speaks A2A 0.3 (send no A2A-Version, or 0.3); send 1.0 calls to ${where}`;
  return {
    service: A2A_V03_SERVICE, // the v0.3 proto's service, as gRPC 0.3 calls report (a2a_version 0.3)
    method(name) {
      const method = methods.get(name);
      if (method !== undefined) return method;
      const shown = JSON.stringify(name.slice(0, 64));
      // a 1.0 method here is "not found", with the way to the endpoint that has it.
      if (METHODS.has(name))
        return `Method not found: ${shown} is an A2A 1.0 method; this endpoint speaks A2A 0.3 (message/send, tasks/get, ...). Send 1.0 calls to ${where} with A2A-Version: 1.0`;
      return `Method not found: ${shown}`;
    },
    protocolVersion: "0.3",
    checkVersion: (metadata) => checkV03Version(metadata, refusal),
    context: v03Context,
  };
}

/** The call as v0.3 (asV03Call), the echo of activated extensions under the v0.3 header name (R-BIND-14). */
function v03Context(call: CallContext): CallContext {
  const setResponseHeader = (key: string, value: string) => call.setResponseHeader(key === "a2a-extensions" ? "X-A2A-Extensions" : key, value);
  return Object.create(asV03Call(call), { setResponseHeader: { value: setResponseHeader } }) as CallContext;
}

function unary<I, O>(face: FaceCall, rpc: string): (request: I) => Promise<O> {
  const handler = face.handlers[rpc] as UnaryHandler<I, O> | undefined;
  if (typeof handler !== "function") throw new UnsupportedOperationError(`${rpc} is not implemented by this server`);
  return (request) => handler(request, face.context);
}

type Entry = Omit<DialectMethod, "streaming" | "invoke" | "stream"> & Partial<Pick<DialectMethod, "invoke" | "stream">>;

function v03Methods(): ReadonlyMap<string, DialectMethod> {
  const entries: Record<string, Entry> = {
    "message/send": {
      rpc: "SendMessage",
      decode: sendMessageRequestFromV03,
      invoke: async (face, request) => sendMessageResultToV03(await unary<Message, SendMessageResponse>(face, "SendMessage")(request)),
    },
    "message/stream": {
      rpc: "SendStreamingMessage",
      decode: sendMessageRequestFromV03,
      stream: (face, request, out) => streamV03(face, "SendStreamingMessage", request, out),
    },
    "tasks/get": {
      rpc: "GetTask",
      decode: getTaskRequestFromV03,
      invoke: async (face, request) => taskToV03(await unary<Message, Task>(face, "GetTask")(request)),
    },
    "tasks/cancel": {
      rpc: "CancelTask",
      decode: cancelTaskRequestFromV03,
      invoke: async (face, request) => taskToV03(await unary<Message, Task>(face, "CancelTask")(request)),
    },
    "tasks/resubscribe": { rpc: "SubscribeToTask", decode: subscribeRequestFromV03, stream: resubscribeV03 },
    "tasks/pushNotificationConfig/set": {
      rpc: "CreateTaskPushNotificationConfig",
      decode: setPushConfigRequestFromV03,
      invoke: async (face, request) => pushConfigToV03(await unary<Message, TaskPushNotificationConfig>(face, "CreateTaskPushNotificationConfig")(request)),
    },
    "tasks/pushNotificationConfig/get": {
      rpc: "GetTaskPushNotificationConfig",
      decode: (params) => {
        const { taskId, configId } = getPushConfigParamsFromV03(params);
        return create(GetTaskPushNotificationConfigRequestSchema, { taskId, id: configId ?? "" });
      },
      invoke: async (face, request) => pushConfigToV03(await getPushConfig(face, request as GetTaskPushNotificationConfigRequest)),
    },
    "tasks/pushNotificationConfig/list": {
      rpc: "ListTaskPushNotificationConfigs",
      decode: listPushConfigsRequestFromV03,
      invoke: async (face, request) => (await allPushConfigs(face, (request as ListTaskPushNotificationConfigsRequest).taskId)).map(pushConfigToV03),
    },
    "tasks/pushNotificationConfig/delete": {
      rpc: "DeleteTaskPushNotificationConfig",
      decode: deletePushConfigRequestFromV03,
      // BQ-8: the v0.3 schema's result is null.
      invoke: async (face, request) => (await unary<Message, Message>(face, "DeleteTaskPushNotificationConfig")(request), null),
    },
    "agent/getAuthenticatedExtendedCard": {
      rpc: "GetExtendedAgentCard",
      decode: () => create(GetExtendedAgentCardRequestSchema, {}),
      invoke: async (face, request) => toV03CardJson(await unary<Message, AgentCard>(face, "GetExtendedAgentCard")(request)) as JsonValue,
    },
  };
  const notUnary = () => Promise.reject(new Error("a streaming method has no unary call"));
  const notStreaming = () => Promise.reject(new Error("a unary method has no stream"));
  return new Map(
    Object.entries(entries).map(([name, entry]) => [
      name,
      { ...entry, streaming: entry.stream !== undefined, invoke: entry.invoke ?? notUnary, stream: entry.stream ?? notStreaming },
    ]),
  );
}

/** The v0.3 JSON-RPC form of stream events: bare events, `final` on status updates (R-V03-21, R-V03-32). */
const JSON_STREAM: V03StreamForm<StreamResult> = {
  event: (event) => ({ result: streamEventToV03(event) }),
  finalUpdate: (task) => ({ result: finalStatusUpdateToV03(task) }),
};

/** A face stream in v0.3 form, closed by a final status update where v0.3 clients wait for one (BQ-18). */
function streamV03(face: FaceCall, rpc: string, request: Message, out: StreamWriter<StreamResult>): Promise<void> {
  const handler = face.handlers[rpc] as ServerStreamHandler<Message, StreamResponse>;
  return streamAsV03(out, JSON_STREAM, (events) => handler(request, face.context, events));
}

/** tasks/resubscribe; to a finished task (which 1.0 refuses, R-SUB-2): the task, a final status update, the end (BQ-19). */
function resubscribeV03(face: FaceCall, request: Message, out: StreamWriter<StreamResult>): Promise<void> {
  const { id } = request as SubscribeToTaskRequest;
  const handler = face.handlers["SubscribeToTask"] as ServerStreamHandler<Message, StreamResponse>;
  const getTask = () => unary<Message, Task>(face, "GetTask")(create(GetTaskRequestSchema, { id }));
  return resubscribeAsV03(out, JSON_STREAM, id, (events) => handler(request, face.context, events), getTask);
}

/** R-V03-34: without a config id, the config whose id is the task's, else the task's only one. */
async function getPushConfig(face: FaceCall, request: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
  if (request.id !== "") return unary<Message, TaskPushNotificationConfig>(face, "GetTaskPushNotificationConfig")(request);
  const configs = await allPushConfigs(face, request.taskId);
  const chosen = configs.find((config) => config.id === request.taskId) ?? (configs.length === 1 ? configs[0] : undefined);
  if (chosen !== undefined) return chosen;
  if (configs.length === 0) throw new TaskNotFoundError(request.taskId, `task ${JSON.stringify(request.taskId)} has no push config`);
  throw InvalidRequestError.field("pushNotificationConfigId", "is required: the task has several push configs");
}

/** Every config of a task (R-V03-62: v0.3 lists have no pages), read page by page from the face. */
async function allPushConfigs(face: FaceCall, taskId: string): Promise<TaskPushNotificationConfig[]> {
  const list = unary<Message, ListTaskPushNotificationConfigsResponse>(face, "ListTaskPushNotificationConfigs");
  const configs: TaskPushNotificationConfig[] = [];
  let pageToken = "";
  // Bounded: the configs per task are capped, so a handful of pages at most.
  for (let page = 0; page < 1000; page++) {
    const response = await list(listPushConfigsRequestFromV03({ id: taskId }, pageToken));
    configs.push(...response.configs);
    pageToken = response.nextPageToken;
    if (pageToken === "") break;
  }
  return configs;
}
