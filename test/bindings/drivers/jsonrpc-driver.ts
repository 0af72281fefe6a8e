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

interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

let nextId = 1;

export function jsonRpcDriver(endpoint: string, defaultKey: string): BindingDriver {
  const failure = (error: RpcError) => new BindingError("jsonrpc", codeName(error.code), error.message, detailsFromJson(error.data));

  async function post(method: string, params: JsonValue, options: CallOptions): Promise<Response> {
    return fetch(endpoint, {
      method: "POST",
      headers: httpHeaders(options, defaultKey, "application/json"),
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    });
  }

  /** The response's `result`, or its error thrown as a BindingError. */
  async function resultOf(response: Response): Promise<JsonValue> {
    const body = (await response.json()) as { result?: JsonValue; error?: RpcError };
    if (body.error !== undefined) throw failure(body.error);
    return body.result!;
  }

  function unary<Q extends DescMessage, R extends DescMessage>(method: string, requestSchema: Q, responseSchema: R) {
    return async (request: MessageShape<Q>, options: CallOptions = {}): Promise<MessageShape<R>> =>
      fromJson(responseSchema, await resultOf(await post(method, toJson(requestSchema, request), options)));
  }

  function serverStream<Q extends DescMessage>(method: string, requestSchema: Q) {
    return async (request: MessageShape<Q>, options: CallOptions = {}): Promise<StreamResponse[]> => {
      const response = await post(method, toJson(requestSchema, request), options);
      // R-JRPC-14: an error before the first event is an ordinary JSON-RPC response.
      if (!isEventStream(response)) {
        await resultOf(response);
        throw new Error(`${method} answered a result without a stream`);
      }
      return readEvents(
        response,
        (data) => {
          const body = data as unknown as { result?: JsonValue; error?: RpcError };
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
