import type { JsonObject } from "@bufbuild/protobuf";
import type { AgentCard, AgentExtension } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { getExtendedAgentCard } from "../agents/agent-card.js";
import { PushNotificationNotSupportedError, UnsupportedOperationError } from "../lifecycle/errors.js";
import type { RequestContext, TaskService } from "../lifecycle/task-service.js";
import type { A2AServiceHandlers, CallContext } from "./grpc-adapter.js";
import {
  validateCancelTaskRequest,
  validateCreateTaskPushNotificationConfigRequest,
  validateDeleteTaskPushNotificationConfigRequest,
  validateGetExtendedAgentCardRequest,
  validateGetTaskPushNotificationConfigRequest,
  validateGetTaskRequest,
  validateListTaskPushNotificationConfigsRequest,
  validateListTasksRequest,
  validateSendMessageRequest,
  validateSubscribeToTaskRequest,
  DEFAULT_VALIDATION_LIMITS,
  type ValidationLimits,
} from "./request-validation.js";
import { checkRequiredExtensions, formatActivatedExtensions, readRequestedExtensions, readVersion } from "./service-parameters.js";
import { pipeStream } from "./stream-pipe.js";
import { readResumeCursor } from "./resume-cursor-header.js";
import { STREAM_RESUME_EXTENSION } from "../streams/index.js";
import type { BacklogLimits } from "../streams/index.js";

export interface A2AHandlerOptions {
  readonly service: TaskService;
  readonly card: AgentCard;
  readonly extendedCard: AgentCard | undefined;
  /** Ruling A-3: read a missing a2a-version as 1.0 (an operator option for hand-driven tools). */
  readonly allowMissingVersion: boolean;
  /** What a slow client's merged backlog may hold before its stream is ended with RESOURCE_EXHAUSTED. */
  readonly streamLimits: BacklogLimits;
  readonly limits?: ValidationLimits;
  /** Set when the stream-resume extension is declared: its heartbeat interval (null: none). */
  readonly streamResume?: { readonly heartbeatMs: number | null };
}

/**
 * The A2A RPCs at the protocol edge. Each call runs the checks in the order of ruling A-15:
 * version, authentication (none is configured: every caller is "anonymous"), request
 * validation, capability, then access and existence in the lifecycle core.
 */
export function createA2AHandlers(options: A2AHandlerOptions): Partial<A2AServiceHandlers> {
  const { service, card } = options;
  const limits = options.limits ?? DEFAULT_VALIDATION_LIMITS;
  const declaredExtensions: readonly AgentExtension[] = card.capabilities?.extensions ?? [];
  const streaming = card.capabilities?.streaming === true;
  const push = card.capabilities?.pushNotifications === true;

  /** Version and identity: what every RPC checks before looking at its request. */
  const versionOptions = { allowMissing: options.allowMissingVersion };
  const begin = (call: CallContext, tenant: string): EdgeRequestContext => {
    readVersion(call.metadata, versionOptions);
    return new EdgeRequestContext(call, tenant, readRequestedExtensions(call.metadata));
  };
  const requireExtensions = (rc: RequestContext) => checkRequiredExtensions(rc.requestedExtensions, declaredExtensions);
  const echoExtensions = (rc: EdgeRequestContext, call: CallContext) => {
    if (rc.activatedAny) call.setResponseHeader("a2a-extensions", formatActivatedExtensions([...rc.activatedExtensions]));
  };
  /** The resume extension for this stream, when declared and activated by the client (then echoed, R-EXT-5). */
  const resumeFor = (rc: RequestContext) => {
    if (options.streamResume === undefined || !rc.requestedExtensions.includes(STREAM_RESUME_EXTENSION)) return undefined;
    rc.activatedExtensions.add(STREAM_RESUME_EXTENSION);
    return options.streamResume;
  };
  const requireStreaming = () => {
    if (!streaming) throw new UnsupportedOperationError("streaming is not supported by this agent (capabilities.streaming is off); use SendMessage and GetTask");
  };
  const requirePush = () => {
    if (!push) throw new PushNotificationNotSupportedError();
  };
  const refusePush =
    <R extends { tenant: string }>(validate: (request: R, limits: ValidationLimits) => void) =>
    async (request: R, call: CallContext): Promise<never> => {
      begin(call, request.tenant);
      validate(request, limits);
      throw new PushNotificationNotSupportedError();
    };

  return {
    async SendMessage(request, call) {
      const rc = begin(call, request.tenant);
      validateSendMessageRequest(request, limits);
      requireExtensions(rc);
      if (request.configuration?.taskPushNotificationConfig) requirePush();
      const response = await service.sendMessage(rc, request);
      if (response.payload.case === "task") call.setTaskId(response.payload.value.id);
      echoExtensions(rc, call);
      return response;
    },

    async SendStreamingMessage(request, call, out) {
      const rc = begin(call, request.tenant);
      validateSendMessageRequest(request, limits);
      requireStreaming();
      requireExtensions(rc);
      if (request.configuration?.taskPushNotificationConfig) requirePush();
      const resume = resumeFor(rc);
      await pipeStream({ call, out, limits: options.streamLimits, rc, resume, open: (sink) => service.sendStreamingMessage(rc, request, sink) });
    },

    async GetTask(request, call) {
      const rc = begin(call, request.tenant);
      validateGetTaskRequest(request, limits);
      requireExtensions(rc);
      call.setTaskId(request.id);
      return service.getTask(rc, request.id, request.historyLength);
    },

    async ListTasks(request, call) {
      const rc = begin(call, request.tenant);
      validateListTasksRequest(request, limits);
      requireExtensions(rc);
      return service.listTasks(rc, request);
    },

    async CancelTask(request, call) {
      const rc = begin(call, request.tenant);
      validateCancelTaskRequest(request, limits);
      requireExtensions(rc);
      call.setTaskId(request.id);
      return service.cancelTask(rc, request.id, request.metadata as JsonObject | undefined);
    },

    async SubscribeToTask(request, call, out) {
      const rc = begin(call, request.tenant);
      validateSubscribeToTaskRequest(request, limits);
      requireStreaming();
      requireExtensions(rc);
      call.setTaskId(request.id);
      const resume = resumeFor(rc);
      const after = resume === undefined ? undefined : readResumeCursor(call.metadata, request.id);
      await pipeStream({ call, out, limits: options.streamLimits, rc, resume, open: (sink) => service.subscribeToTask(rc, request.id, sink, after) });
    },

    async GetExtendedAgentCard(request, call) {
      begin(call, request.tenant);
      validateGetExtendedAgentCardRequest(request, limits);
      return getExtendedAgentCard(card, options.extendedCard);
    },

    // Push notification configs (R-CAP-1): webhook delivery is not built yet, so the card never
    // declares the capability (see createApp) and these validate, then refuse.
    CreateTaskPushNotificationConfig: refusePush(validateCreateTaskPushNotificationConfigRequest),
    GetTaskPushNotificationConfig: refusePush(validateGetTaskPushNotificationConfigRequest),
    ListTaskPushNotificationConfigs: refusePush(validateListTaskPushNotificationConfigsRequest),
    DeleteTaskPushNotificationConfig: refusePush(validateDeleteTaskPushNotificationConfigRequest),
  };
}

/** The lifecycle's view of one call. A class: its accessors are shared, not closures made per call. */
class EdgeRequestContext implements RequestContext {
  readonly caller: { readonly tenant: string; readonly principal: string };
  /** Made when first asked for: most calls activate no extension, and a Set costs ~150 bytes. */
  #activated: Set<string> | undefined;

  constructor(private readonly call: CallContext, tenant: string, readonly requestedExtensions: readonly string[]) {
    this.caller = { tenant, principal: "anonymous" };
  }

  get activatedExtensions(): Set<string> {
    return (this.#activated ??= new Set());
  }

  /** True once an extension was activated (without making the set). */
  get activatedAny(): boolean {
    return this.#activated !== undefined && this.#activated.size > 0;
  }

  /** Lazy: an AbortSignal costs an AbortController per call; most calls never need one. */
  get signal(): AbortSignal {
    return this.call.signal;
  }

  onGone(listener: (reason: unknown) => void): () => void {
    return this.call.onEnd(listener);
  }
}
