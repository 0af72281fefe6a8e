import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type { A2AService as V03A2AService, StreamResponse as V03StreamResponse } from "../../gen/es/a2a/v1/a2a_pb.js";
import { GetExtendedAgentCardRequestSchema, GetTaskRequestSchema, type AgentCard, type StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { AuthError } from "../auth/index.js";
import { ExtendedAgentCardNotConfiguredError } from "../lifecycle/index.js";
import { asV03Call, type A2AServiceHandlers, type CallContext, type ServiceHandlers, type StreamWriter } from "../service/face.js";
import * as toV1 from "./proto/v03-proto-to-v1.js";
import * as toV03 from "./proto/v1-to-v03-proto.js";
import { checkV03Version } from "./v03-service-version.js";
import { resubscribeAsV03, streamAsV03, type V03StreamForm } from "./v03-stream.js";
import { configNameFields, createPushConfigFields, sendMessageFields, taskNameFields, taskParentFields, withV03Fields } from "./v03-service-fields.js";

/*
 * The v0.3 face (a2a.v1.A2AService) over the v1.0 face: each handler checks the v0.3 version rule,
 * translates the request (src/v03/proto), calls the v1.0 handler with the same call marked as a
 * v0.3 call (asV03Call: same admission, owner, limits and observers), and translates the answer.
 * Binding-neutral: gRPC serves these handlers as they are; REST 0.3 carries the same messages as
 * ProtoJSON (R-V03-15).
 */

/** Handlers for the RPCs of a2a.v1.A2AService, keyed by RPC name as in the v0.3 proto. */
export type V03ServiceHandlers = ServiceHandlers<typeof V03A2AService>;

export interface V03ServiceOptions {
  /** The public card: what GetAgentCard answers unless the caller gets the extended card (BQ-16). */
  readonly card: AgentCard;
}

/** The v1.0 RPC each v0.3 RPC runs as: its scopes (A2A_AUTH_SCOPES) and records are the v1.0 RPC's. */
const V1_METHOD = {
  SendMessage: "SendMessage",
  SendStreamingMessage: "SendStreamingMessage",
  GetTask: "GetTask",
  CancelTask: "CancelTask",
  TaskSubscription: "SubscribeToTask",
  CreateTaskPushNotificationConfig: "CreateTaskPushNotificationConfig",
  GetTaskPushNotificationConfig: "GetTaskPushNotificationConfig",
  ListTaskPushNotificationConfig: "ListTaskPushNotificationConfigs",
  GetAgentCard: "GetExtendedAgentCard",
  DeleteTaskPushNotificationConfig: "DeleteTaskPushNotificationConfig",
} as const satisfies Record<keyof V03ServiceHandlers, keyof A2AServiceHandlers>;

/** The v0.3 handlers over these v1.0 handlers; an RPC whose v1.0 handler is missing is left out (UNIMPLEMENTED), but for GetAgentCard. */
export function createV03Handlers(v1: Partial<A2AServiceHandlers>, options: V03ServiceOptions): Partial<V03ServiceHandlers> {
  const handlers: Partial<V03ServiceHandlers> = {
    SendMessage: async (request, call) => {
      checkV03Version(call.metadata);
      const send = toV1.sendMessageRequestToV1(request);
      const response = await withV03Fields(sendMessageFields, () => v1.SendMessage!(send, v1CallOf(call, "SendMessage")));
      return toV03.sendMessageResponseToV03(response);
    },
    SendStreamingMessage: async (request, call, out) => {
      checkV03Version(call.metadata);
      const send = toV1.sendMessageRequestToV1(request);
      const v1Call = v1CallOf(call, "SendStreamingMessage");
      await streamAsV03(out, PROTO_STREAM, (events) => withV03Fields(sendMessageFields, () => v1.SendStreamingMessage!(send, v1Call, events)));
    },
    GetTask: async (request, call) => {
      checkV03Version(call.metadata);
      const get = toV1.getTaskRequestToV1(request);
      return toV03.taskToV03(await withV03Fields(taskNameFields, () => v1.GetTask!(get, v1CallOf(call, "GetTask"))));
    },
    CancelTask: async (request, call) => {
      checkV03Version(call.metadata);
      const cancel = toV1.cancelTaskRequestToV1(request);
      return toV03.taskToV03(await withV03Fields(taskNameFields, () => v1.CancelTask!(cancel, v1CallOf(call, "CancelTask"))));
    },
    TaskSubscription: async (request, call, out) => {
      checkV03Version(call.metadata);
      const subscribe = toV1.taskSubscriptionRequestToV1(request);
      const v1Call = v1CallOf(call, "TaskSubscription");
      const { GetTask } = v1;
      const getTask = GetTask === undefined ? undefined : () => GetTask(create(GetTaskRequestSchema, { id: subscribe.id }), v1Call);
      const run = (events: StreamWriter<StreamResponse>) => withV03Fields(taskNameFields, () => v1.SubscribeToTask!(subscribe, v1Call, events));
      await resubscribeAsV03(out, PROTO_STREAM, subscribe.id, run, getTask);
    },
    CreateTaskPushNotificationConfig: async (request, call) => {
      checkV03Version(call.metadata);
      const config = toV1.createPushConfigRequestToV1(request);
      const created = await withV03Fields(createPushConfigFields, () =>
        v1.CreateTaskPushNotificationConfig!(config, v1CallOf(call, "CreateTaskPushNotificationConfig")),
      );
      return toV03.pushConfigToV03(created);
    },
    GetTaskPushNotificationConfig: async (request, call) => {
      checkV03Version(call.metadata);
      const get = toV1.getPushConfigRequestToV1(request);
      const config = await withV03Fields(configNameFields, () => v1.GetTaskPushNotificationConfig!(get, v1CallOf(call, "GetTaskPushNotificationConfig")));
      return toV03.pushConfigToV03(config);
    },
    ListTaskPushNotificationConfig: async (request, call) => {
      checkV03Version(call.metadata);
      const listed = toV1.listPushConfigsRequestToV1(request);
      const list = await withV03Fields(taskParentFields, () => v1.ListTaskPushNotificationConfigs!(listed, v1CallOf(call, "ListTaskPushNotificationConfig")));
      return toV03.listPushConfigsResponseToV03(list);
    },
    DeleteTaskPushNotificationConfig: async (request, call) => {
      checkV03Version(call.metadata);
      const deleted = toV1.deletePushConfigRequestToV1(request);
      await withV03Fields(configNameFields, () => v1.DeleteTaskPushNotificationConfig!(deleted, v1CallOf(call, "DeleteTaskPushNotificationConfig")));
      return create(EmptySchema);
    },
    GetAgentCard: async (_request, call) => {
      checkV03Version(call.metadata);
      return toV03.agentCardToV03(await cardFor(v1, options.card, v1CallOf(call, "GetAgentCard")));
    },
  };
  for (const rpc of Object.keys(V1_METHOD) as Array<keyof typeof V1_METHOD>) {
    // GetAgentCard always has the public card to give.
    if (rpc !== "GetAgentCard" && v1[V1_METHOD[rpc]] === undefined) delete handlers[rpc];
  }
  return handlers;
}

/**
 * BQ-16: the extended card when the card declares one and the caller may have it (authenticated,
 * with the scopes of GetExtendedAgentCard), else the public card.
 */
async function cardFor(v1: Partial<A2AServiceHandlers>, card: AgentCard, call: CallContext): Promise<AgentCard> {
  if (card.capabilities?.extendedAgentCard !== true || v1.GetExtendedAgentCard === undefined) return card;
  try {
    return await v1.GetExtendedAgentCard(create(GetExtendedAgentCardRequestSchema), call);
  } catch (error) {
    if (error instanceof AuthError || error instanceof ExtendedAgentCardNotConfiguredError) return card;
    throw error;
  }
}

/**
 * The call as the v1.0 face sees it: marked v0.3 (asV03Call), named after the v1.0 RPC (scopes),
 * and echoing activated extensions in the v0.3 header too (X-A2A-Extensions).
 */
function v1CallOf(call: CallContext, v03Method: keyof typeof V1_METHOD): CallContext {
  const v03 = asV03Call(call);
  return Object.create(v03, {
    method: { value: V1_METHOD[v03Method], enumerable: true },
    setResponseHeader: {
      value: (key: string, value: string) => {
        call.setResponseHeader(key, value);
        if (key === "a2a-extensions") call.setResponseHeader("x-a2a-extensions", value);
      },
    },
  }) as CallContext;
}

/** The v0.3 proto form of stream events (gRPC, and HTTP+JSON as their ProtoJSON): status updates with `final` (R-V03-32). */
const PROTO_STREAM: V03StreamForm<V03StreamResponse> = { event: toV03.streamResponseToV03, finalUpdate: toV03.finalStatusUpdateOf };

/** A handlers object carries its v0.3 handlers under this key (as it carries its admission); the bindings serve them. */
export const V03_HANDLERS: unique symbol = Symbol("a2a v0.3 handlers");

/** The v1.0 handlers with the v0.3 face over them attached (A2A_V03 on), or as they are (off: null). */
export function withV03Handlers<H extends Partial<A2AServiceHandlers>>(v1: H, options: V03ServiceOptions | null): H {
  return options === null ? v1 : { ...v1, [V03_HANDLERS]: createV03Handlers(v1, options) };
}

/** The v0.3 handlers a handlers object carries (see withV03Handlers), if any. */
export function v03HandlersOf(handlers: object): Partial<V03ServiceHandlers> | undefined {
  return (handlers as { readonly [V03_HANDLERS]?: Partial<V03ServiceHandlers> })[V03_HANDLERS];
}
