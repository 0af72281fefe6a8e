/**
 * One client interface over every binding (R-BIND-1..4): each driver is a thin client over its
 * real wire, takes and returns the v1.0 protobuf-es messages, and turns every failure into a
 * BindingError that names the gRPC-equivalent code, the ErrorInfo reason and the BadRequest
 * fields, so results and errors of different bindings compare with toEqual.
 */
import { anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema } from "../../../gen/es/google/rpc/error_details_pb.js";
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

export type BindingName = "grpc" | "jsonrpc" | "rest";

/** Who calls and how: the API key (null: no credential) and the A2A version sent (null: none). */
export interface CallOptions {
  readonly apiKey?: string | null;
  readonly version?: string | null;
  /** Extensions the call activates (a2a-extensions / A2A-Extensions). */
  readonly extensions?: readonly string[];
  /** Sees each stream event as it arrives (before the stream ends). */
  readonly onEvent?: (event: StreamResponse) => void;
}

export interface BindingDriver {
  readonly name: BindingName;
  send(request: SendMessageRequest, options?: CallOptions): Promise<SendMessageResponse>;
  /** Every event of the stream, once the server has closed it. */
  stream(request: SendMessageRequest, options?: CallOptions): Promise<StreamResponse[]>;
  get(request: GetTaskRequest, options?: CallOptions): Promise<Task>;
  list(request: ListTasksRequest, options?: CallOptions): Promise<ListTasksResponse>;
  cancel(request: CancelTaskRequest, options?: CallOptions): Promise<Task>;
  subscribe(request: SubscribeToTaskRequest, options?: CallOptions): Promise<StreamResponse[]>;
  createPushConfig(request: TaskPushNotificationConfig, options?: CallOptions): Promise<TaskPushNotificationConfig>;
  getPushConfig(request: GetTaskPushNotificationConfigRequest, options?: CallOptions): Promise<TaskPushNotificationConfig>;
  listPushConfigs(request: ListTaskPushNotificationConfigsRequest, options?: CallOptions): Promise<ListTaskPushNotificationConfigsResponse>;
  deletePushConfig(request: DeleteTaskPushNotificationConfigRequest, options?: CallOptions): Promise<void>;
  extendedCard(request: GetExtendedAgentCardRequest, options?: CallOptions): Promise<AgentCard>;
  close(): void;
}

/** A failure as every binding must be able to express it (R-BIND-38): gRPC code name, reason, fields. */
export class BindingError extends Error {
  constructor(
    readonly binding: BindingName,
    /** The google.rpc code name the binding's error stands for (NOT_FOUND, ...). */
    readonly code: string,
    message: string,
    /** The typed details as they arrived. */
    readonly details: readonly Any[],
  ) {
    super(`${binding}: ${code}: ${message}`);
  }

  /** ErrorInfo.reason and domain, if the error has an ErrorInfo. */
  get info(): { reason: string; domain: string } | undefined {
    for (const detail of this.details) {
      const info = anyUnpack(detail, ErrorInfoSchema);
      if (info !== undefined) return { reason: info.reason, domain: info.domain };
    }
    return undefined;
  }

  /** The fields a BadRequest names, in order. */
  get fields(): string[] {
    return this.details.flatMap((detail) => anyUnpack(detail, BadRequestSchema)?.fieldViolations.map((v) => v.field) ?? []);
  }

  /** What must be the same on every binding: code, reason (with domain), fields. */
  facts(): { code: string; reason?: string; domain?: string; fields: string[] } {
    const info = this.info;
    return { code: this.code, ...(info === undefined ? {} : { reason: info.reason, domain: info.domain }), fields: this.fields };
  }
}

/** The BindingError a call ends in (fails when the call succeeded or threw something else). */
export async function failureOf(call: Promise<unknown>): Promise<BindingError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof BindingError) return error;
    throw error;
  }
  throw new Error("the call succeeded where an error was expected");
}
