/**
 * The gRPC driver: grpc-js with the ts-proto codec (an implementation independent of the
 * server's protobuf-es). Requests go protobuf-es → bytes → ts-proto, which writes the wire;
 * answers are read by ts-proto and handed back as protobuf-es messages.
 */
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { AnySchema, EmptySchema } from "@bufbuild/protobuf/wkt";
import { Status } from "../../../gen/ts-proto/google/rpc/status.js";
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
import { A2AServiceService } from "../../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { BindingError, type BindingDriver, type CallOptions } from "./driver.js";

/** A method of the ts-proto service definition (its codec functions). */
interface TsProtoMethod {
  readonly path: string;
  requestSerialize(value: never): Buffer;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: never): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}

/** `target` is host:port, as the card's GRPC interface gives it (R-BIND-16). */
export function grpcDriver(target: string, defaultKey: string): BindingDriver {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());

  const metadata = (options: CallOptions): grpc.Metadata => {
    const md = new grpc.Metadata();
    const version = options.version === undefined ? "1.0" : options.version;
    if (version !== null) md.set("a2a-version", version);
    const key = options.apiKey === undefined ? defaultKey : options.apiKey;
    if (key !== null) md.set("x-api-key", key);
    if (options.extensions !== undefined) md.set("a2a-extensions", options.extensions.join(","));
    return md;
  };

  // ts-proto decodes what protobuf-es encoded and encodes it again for the wire, and back.
  const serializer = (method: TsProtoMethod, schema: DescMessage) => (request: MessageShape<DescMessage>) =>
    method.requestSerialize(method.requestDeserialize(Buffer.from(toBinary(schema, request))) as never);
  const deserializer =
    <R extends DescMessage>(method: TsProtoMethod, schema: R) =>
    (bytes: Buffer): MessageShape<R> =>
      fromBinary(schema, method.responseSerialize(method.responseDeserialize(bytes) as never));

  function unary<Q extends DescMessage, R extends DescMessage>(method: TsProtoMethod, requestSchema: Q, responseSchema: R) {
    return (request: MessageShape<Q>, options: CallOptions = {}): Promise<MessageShape<R>> =>
      new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          method.path,
          serializer(method, requestSchema),
          deserializer(method, responseSchema),
          request,
          metadata(options),
          (error, response) => (error ? reject(bindingError(error)) : resolve(response!)),
        );
      });
  }

  function serverStream<Q extends DescMessage>(method: TsProtoMethod, requestSchema: Q) {
    return (request: MessageShape<Q>, options: CallOptions = {}): Promise<StreamResponse[]> =>
      new Promise((resolve, reject) => {
        const events: StreamResponse[] = [];
        const call = client.makeServerStreamRequest(
          method.path,
          serializer(method, requestSchema),
          deserializer(method, StreamResponseSchema),
          request,
          metadata(options),
        );
        call.on("data", (event: StreamResponse) => {
          events.push(event);
          options.onEvent?.(event);
        });
        call.on("error", () => undefined); // the status event carries it
        call.on("status", (status: grpc.StatusObject) => (status.code === grpc.status.OK ? resolve(events) : reject(bindingError(status))));
      });
  }

  const s = A2AServiceService;
  const deleteCall = unary(s.deleteTaskPushNotificationConfig, DeleteTaskPushNotificationConfigRequestSchema, EmptySchema);
  return {
    name: "grpc",
    send: unary(s.sendMessage, SendMessageRequestSchema, SendMessageResponseSchema),
    stream: serverStream(s.sendStreamingMessage, SendMessageRequestSchema),
    get: unary(s.getTask, GetTaskRequestSchema, TaskSchema),
    list: unary(s.listTasks, ListTasksRequestSchema, ListTasksResponseSchema),
    cancel: unary(s.cancelTask, CancelTaskRequestSchema, TaskSchema),
    subscribe: serverStream(s.subscribeToTask, SubscribeToTaskRequestSchema),
    createPushConfig: unary(s.createTaskPushNotificationConfig, TaskPushNotificationConfigSchema, TaskPushNotificationConfigSchema),
    getPushConfig: unary(s.getTaskPushNotificationConfig, GetTaskPushNotificationConfigRequestSchema, TaskPushNotificationConfigSchema),
    listPushConfigs: unary(s.listTaskPushNotificationConfigs, ListTaskPushNotificationConfigsRequestSchema, ListTaskPushNotificationConfigsResponseSchema),
    deletePushConfig: async (request, options) => void (await deleteCall(request, options)),
    extendedCard: unary(s.getExtendedAgentCard, GetExtendedAgentCardRequestSchema, AgentCardSchema),
    close: () => client.close(),
  };
}

/** The gRPC status with its rich details (grpc-status-details-bin, decoded by ts-proto). */
function bindingError(status: Pick<grpc.StatusObject, "code" | "details" | "metadata">): BindingError {
  const raw = status.metadata?.get("grpc-status-details-bin")[0];
  const details = raw instanceof Buffer ? Status.decode(raw).details.map((d) => create(AnySchema, { typeUrl: d.typeUrl, value: d.value })) : [];
  return new BindingError("grpc", grpc.status[status.code] ?? String(status.code), status.details, details);
}
