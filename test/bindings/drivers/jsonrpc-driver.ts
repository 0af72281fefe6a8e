/**
 * The JSON-RPC driver (§9): one fetch POST per call to the card's JSONRPC url, params and
 * results as ProtoJSON through protobuf-es (strict: a field the server should not emit fails
 * the parse), streams as SSE whose every data is a JSON-RPC response.
 */
import * as grpc from "@grpc/grpc-js";
import { fromJson, toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import {
  AgentCardSchema,
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTaskPushNotificationConfigsResponseSchema,
  ListTasksRequestSchema,
  ListTasksResponseSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  type StreamResponse,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { BindingError, type BindingDriver, type CallOptions } from "./driver.js";
import { detailsFromJson, httpHeaders, isEventStream, readEvents } from "./http-wire.js";

/** The §5.4 / R-BIND-38 table read backwards: JSON-RPC error code → the gRPC code it stands for. */
const CODE_OF: Readonly<Record<number, string>> = {
  [-32001]: "NOT_FOUND",
  [-32002]: "FAILED_PRECONDITION",
  [-32003]: "FAILED_PRECONDITION",
  [-32004]: "FAILED_PRECONDITION",
  [-32005]: "INVALID_ARGUMENT",
  [-32006]: "INTERNAL",
  [-32007]: "FAILED_PRECONDITION",
  [-32008]: "FAILED_PRECONDITION",
  [-32009]: "FAILED_PRECONDITION",
  [-32700]: "INVALID_ARGUMENT",
  [-32600]: "INVALID_ARGUMENT",
  [-32601]: "UNIMPLEMENTED",
  [-32602]: "INVALID_ARGUMENT",
  [-32603]: "INTERNAL",
};

/** BQ-9 (recommended answer): other refusals are -31000 minus the google.rpc code. */
function codeName(code: number): string {
  const a2a = CODE_OF[code];
  if (a2a !== undefined) return a2a;
  if (code <= -31000 && code > -31100) return grpc.status[-31000 - code] ?? `UNKNOWN(${code})`;
  return `UNKNOWN(${code})`;
}

/** R-JRPC-17: the code each A2A reason must travel with (codes that share a gRPC code differ here). */
const CODE_OF_REASON: Readonly<Record<string, number>> = {
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  INVALID_AGENT_RESPONSE: -32006,
  EXTENDED_AGENT_CARD_NOT_CONFIGURED: -32007,
  EXTENSION_SUPPORT_REQUIRED: -32008,
  VERSION_NOT_SUPPORTED: -32009,
};

/** R-JRPC-11 / BQ-9: the HTTP status of a JSON-RPC error response (200 unless the caller was refused). */
const HTTP_STATUS_OF: Readonly<Record<string, number>> = { UNAUTHENTICATED: 401, PERMISSION_DENIED: 403, RESOURCE_EXHAUSTED: 429 };

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

let nextId = 1;
const A2A_DOMAIN = "a2a-protocol.org";

export function jsonRpcDriver(endpoint: string, defaultKey: string): BindingDriver {
  /** The error as a BindingError, once its code agrees with its reason (and its HTTP status with its code, when known). */
  const failure = (error: RpcError, httpStatus?: number): BindingError => {
    const failed = new BindingError("jsonrpc", codeName(error.code), error.message, detailsFromJson(error.data));
    const reason = failed.info?.domain === A2A_DOMAIN ? failed.info.reason : undefined;
    const want = reason === undefined ? undefined : CODE_OF_REASON[reason];
    if (want !== undefined && error.code !== want) throw new Error(`R-JRPC-17: ${reason} arrived with code ${error.code}, not ${want}`);
    const wantHttp = HTTP_STATUS_OF[failed.code] ?? (error.code <= -31000 && error.code > -31100 ? 400 : 200);
    if (httpStatus !== undefined && httpStatus !== wantHttp)
      throw new Error(`R-JRPC-11: ${failed.code} (${error.code}) arrived with HTTP ${httpStatus}, not ${wantHttp}`);
    return failed;
  };

  /** POSTs one request; `id` is what the answer must echo (R-JRPC-4). */
  async function post(method: string, params: JsonValue, options: CallOptions): Promise<{ response: Response; id: number }> {
    const id = nextId++;
    const response = await fetch(endpoint, {
      method: "POST",
      headers: httpHeaders(options, defaultKey, "application/json"),
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    });
    return { response, id };
  }

  /** The response's `result`, or its error thrown as a BindingError. */
  async function resultOf({ response, id }: { response: Response; id: number }): Promise<JsonValue> {
    const body = (await response.json()) as { id?: unknown; result?: JsonValue; error?: RpcError };
    // A refusal before the body is read (version, credential) has no id to echo: null (docs/protocol-decisions.md, BQ-9).
    const echoed = body.id === id || (body.id === null && body.error !== undefined);
    if (!echoed) throw new Error(`R-JRPC-4: the answer's id is ${JSON.stringify(body.id)}, not ${id}`);
    if (body.error !== undefined) throw failure(body.error, response.status);
    return body.result!;
  }

  function unary<Q extends DescMessage, R extends DescMessage>(method: string, requestSchema: Q, responseSchema: R) {
    return async (request: MessageShape<Q>, options: CallOptions = {}): Promise<MessageShape<R>> =>
      fromJson(responseSchema, await resultOf(await post(method, toJson(requestSchema, request), options)));
  }

  function serverStream<Q extends DescMessage>(method: string, requestSchema: Q) {
    return async (request: MessageShape<Q>, options: CallOptions = {}): Promise<StreamResponse[]> => {
      const sent = await post(method, toJson(requestSchema, request), options);
      // R-JRPC-14: an error before the first event is an ordinary JSON-RPC response.
      if (!isEventStream(sent.response)) {
        await resultOf(sent);
        throw new Error(`${method} answered a result without a stream`);
      }
      return readEvents(
        sent.response,
        (data) => {
          const body = data as unknown as { id?: unknown; result?: JsonValue; error?: RpcError };
          if (body.id !== sent.id) throw new Error(`R-JRPC-12: an event's id is ${JSON.stringify(body.id)}, not ${sent.id}`);
          if (body.error !== undefined) throw failure(body.error);
          return fromJson(StreamResponseSchema, body.result!);
        },
        (data) => {
          throw failure((data as unknown as { error: RpcError }).error);
        },
        options.onEvent,
      );
    };
  }

  const deleteCall = unary("DeleteTaskPushNotificationConfig", DeleteTaskPushNotificationConfigRequestSchema, EmptySchema);
  return {
    name: "jsonrpc",
    send: unary("SendMessage", SendMessageRequestSchema, SendMessageResponseSchema),
    stream: serverStream("SendStreamingMessage", SendMessageRequestSchema),
    get: unary("GetTask", GetTaskRequestSchema, TaskSchema),
    list: unary("ListTasks", ListTasksRequestSchema, ListTasksResponseSchema),
    cancel: unary("CancelTask", CancelTaskRequestSchema, TaskSchema),
    subscribe: serverStream("SubscribeToTask", SubscribeToTaskRequestSchema),
    createPushConfig: unary("CreateTaskPushNotificationConfig", TaskPushNotificationConfigSchema, TaskPushNotificationConfigSchema),
    getPushConfig: unary("GetTaskPushNotificationConfig", GetTaskPushNotificationConfigRequestSchema, TaskPushNotificationConfigSchema),
    listPushConfigs: unary("ListTaskPushNotificationConfigs", ListTaskPushNotificationConfigsRequestSchema, ListTaskPushNotificationConfigsResponseSchema),
    deletePushConfig: async (request, options) => void (await deleteCall(request, options)),
    extendedCard: unary("GetExtendedAgentCard", GetExtendedAgentCardRequestSchema, AgentCardSchema),
    close: () => undefined,
  };
}
