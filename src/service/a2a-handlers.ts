import { create, type JsonObject } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import type {
  AgentCard,
  AgentExtension,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { getExtendedAgentCard } from "../agents/agent-card.js";
import type { CallerAuthenticator } from "../auth/caller-authenticator.js";
import { ANONYMOUS_PRINCIPAL } from "../auth/identity.js";
import {
  type Caller,
  InvalidRequestError,
  LimitExceededError,
  PushNotificationNotSupportedError,
  UnsupportedOperationError,
  type RequestContext,
  type TaskService,
} from "../lifecycle/index.js";
import type { PushConfigService } from "../push/push-configs.js";
import type { ConcurrencyLimiter } from "../limits/concurrency-limiter.js";
import type { RateLimiter } from "../limits/rate-limiter.js";
import type { TaskQuota } from "../limits/task-quota.js";
import { AuthError } from "../auth/auth-error.js";
import type { A2AServiceHandlers, CallContext, StreamWriter } from "./face.js";
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
import { CALL_ADMISSION, CredentialAdmission, type CallAdmission } from "./call-admission.js";
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
  /** The push config RPCs; required when the card declares push notifications. */
  readonly pushConfigs?: PushConfigService;
  /** The destination guard's check of a webhook URL as written: why it is refused, or undefined. */
  readonly checkPushUrl?: (url: string) => string | undefined;
  /** Verifies every call's credentials (README "Authentication"); undefined = every caller is "anonymous". */
  readonly auth?: CallerAuthenticator;
  /** Failed authentications per second per client address (charged on each refused credential); undefined = no limit. */
  readonly authFailures?: RateLimiter;
  /** The quota of stored tasks per principal; undefined = none. */
  readonly taskQuota?: TaskQuota;
  /** Requests per second per principal; undefined = no limit. */
  readonly rate?: RateLimiter;
  /** Open streams per principal; undefined = no limit. */
  readonly streams?: ConcurrencyLimiter;
  /** Set when the stream-resume extension is declared: its heartbeat interval (null: none). */
  readonly streamResume?: { readonly heartbeatMs: number | null };
}

type Begun = EdgeRequestContext | Promise<EdgeRequestContext>;

/**
 * The A2A RPCs at the protocol edge. Each call runs the checks in the order of ruling A-15:
 * version, authentication (when configured; otherwise every caller is "anonymous") and the
 * caller's request rate, request validation, capability, then access and existence in the
 * lifecycle core, which sees only the caller's own tasks.
 */
export function createA2AHandlers(options: A2AHandlerOptions): A2AHandlerSet {
  const { service, card } = options;
  const limits = options.limits ?? DEFAULT_VALIDATION_LIMITS;
  const declaredExtensions: readonly AgentExtension[] = card.capabilities?.extensions ?? [];
  const streaming = card.capabilities?.streaming === true;
  const push = card.capabilities?.pushNotifications === true;

  /** Version and identity: what every RPC checks before looking at its request. */
  const versionOptions = { allowMissing: options.allowMissingVersion };
  const { auth, rate } = options;
  const admission = auth && new CredentialAdmission(auth, versionOptions, options.authFailures);
  const admitted = (call: CallContext, caller: Caller): EdgeRequestContext => {
    call.setPrincipal(caller.principal);
    if (rate !== undefined) {
      const waitMs = rate.take(caller.principal);
      if (waitMs > 0)
        throw new LimitExceededError(
          "RATE_LIMITED",
          `principal ${JSON.stringify(caller.principal.slice(0, 64))} is over its request rate; retry in ${waitMs} ms`,
          waitMs,
        );
    }
    return new EdgeRequestContext(call, caller, readRequestedExtensions(call.metadata, call.protocolVersion));
  };
  const begin = (call: CallContext, tenant: string): Begun => {
    // A v0.3 endpoint has checked the call against the v0.3 rule (R-V03-2) before translating it.
    if (call.protocolVersion !== "0.3") readVersion(call.metadata, versionOptions);
    if (auth === undefined) {
      const caller = { tenant, principal: ANONYMOUS };
      return rate === undefined ? new EdgeRequestContext(call, caller, readRequestedExtensions(call.metadata, call.protocolVersion)) : admitted(call, caller);
    }
    // Proven by the admission interceptor before the request was decoded: only tenant and scopes are left.
    const identity = admission?.admitted(call.metadata);
    if (identity !== undefined) return admitted(call, auth.authorize(identity, call.method, tenant));
    // A server that runs these handlers without their admission (not startServer's): the whole check here.
    const caller = auth.authenticate(call, call.method, tenant);
    return caller instanceof Promise ? caller.then((c) => admitted(call, c)) : admitted(call, caller);
  };
  /** A unary handler whose body runs once the caller is known (at once, unless a credential needs an async check). */
  const unary =
    <R extends { tenant: string }, O>(body: (rc: EdgeRequestContext, request: R, call: CallContext) => Promise<O>) =>
    (request: R, call: CallContext): Promise<O> => {
      try {
        const begun: Begun = begin(call, request.tenant);
        return begun instanceof Promise ? begun.then((rc) => body(rc, request, call)) : body(begun, request, call);
      } catch (error) {
        return Promise.reject(error); // from begin(), or a body that is not async
      }
    };
  /** The same for a streaming handler; the stream counts against its principal's open streams. */
  const streamingCall =
    <R extends { tenant: string }>(body: (rc: EdgeRequestContext, request: R, call: CallContext, out: StreamWriter<StreamResponse>) => Promise<void>) =>
    async (request: R, call: CallContext, out: StreamWriter<StreamResponse>): Promise<void> => {
      const rc = await begin(call, request.tenant);
      const streams = options.streams;
      if (streams === undefined) return body(rc, request, call, out);
      const principal = rc.caller.principal;
      if (streams.acquire(principal) !== "ok") {
        throw new LimitExceededError(
          "TOO_MANY_STREAMS",
          `principal ${JSON.stringify(principal.slice(0, 64))} has too many open streams; close one, or retry later`,
          1000,
        );
      }
      try {
        await body(rc, request, call, out);
      } finally {
        streams.release(principal);
      }
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
    if (!streaming)
      throw new UnsupportedOperationError("streaming is not supported by this agent (capabilities.streaming is off); use SendMessage and GetTask");
  };
  const pushConfigs = options.pushConfigs;
  const requirePush = (): PushConfigService => {
    if (!push || pushConfigs === undefined) throw new PushNotificationNotSupportedError();
    return pushConfigs;
  };
  /** A-28 at creation: a destination the guard refuses is INVALID_ARGUMENT on the url field. */
  const checkDestination = (field: string, url: string) => {
    const why = options.checkPushUrl?.(url);
    if (why !== undefined) throw InvalidRequestError.field(field, why);
  };
  const INLINE_URL = "configuration.task_push_notification_config.url";
  /** A message that names no task starts one: it must fit the principal's quota, if any (undefined = no check to wait for). */
  const checkTaskQuota = (rc: RequestContext, request: SendMessageRequest): Promise<void> | undefined =>
    options.taskQuota === undefined || request.message?.taskId !== "" ? undefined : options.taskQuota.checkRoomFor(rc.caller);

  const handlers: Partial<A2AServiceHandlers> = {
    // Not async: while async hooks run (tracing on) every await makes a promise of its own, and each
    // promise costs the hooks' work; one then is one promise (its throws become rejections: unary).
    SendMessage: unary((rc, request: SendMessageRequest, call) => {
      validateSendMessageRequest(request, limits);
      requireExtensions(rc);
      const inline = request.configuration?.taskPushNotificationConfig;
      if (inline) {
        requirePush();
        checkDestination(INLINE_URL, inline.url);
      }
      const send = () =>
        service.sendMessage(rc, request).then((response) => {
          if (response.payload.case === "task") call.setTaskId(response.payload.value.id);
          echoExtensions(rc, call);
          return response;
        });
      const quotaChecked = checkTaskQuota(rc, request);
      return quotaChecked === undefined ? send() : quotaChecked.then(send);
    }),

    SendStreamingMessage: streamingCall(async (rc, request: SendMessageRequest, call, out) => {
      validateSendMessageRequest(request, limits);
      requireStreaming();
      requireExtensions(rc);
      const inline = request.configuration?.taskPushNotificationConfig;
      if (inline) {
        requirePush();
        checkDestination(INLINE_URL, inline.url);
      }
      await checkTaskQuota(rc, request);
      const resume = resumeFor(rc);
      await pipeStream({ call, out, limits: options.streamLimits, rc, resume, open: (sink) => service.sendStreamingMessage(rc, request, sink) });
    }),

    GetTask: unary(async (rc, request: GetTaskRequest, call) => {
      validateGetTaskRequest(request, limits);
      requireExtensions(rc);
      call.setTaskId(request.id);
      return service.getTask(rc, request.id, request.historyLength);
    }),

    ListTasks: unary(async (rc, request: ListTasksRequest) => {
      validateListTasksRequest(request, limits);
      requireExtensions(rc);
      return service.listTasks(rc, request);
    }),

    CancelTask: unary(async (rc, request: CancelTaskRequest, call) => {
      validateCancelTaskRequest(request, limits);
      requireExtensions(rc);
      call.setTaskId(request.id);
      return service.cancelTask(rc, request.id, request.metadata as JsonObject | undefined);
    }),

    SubscribeToTask: streamingCall(async (rc, request: SubscribeToTaskRequest, call, out) => {
      validateSubscribeToTaskRequest(request, limits);
      requireStreaming();
      requireExtensions(rc);
      call.setTaskId(request.id);
      const resume = resumeFor(rc);
      const after = resume === undefined ? undefined : readResumeCursor(call.metadata, request.id);
      await pipeStream({ call, out, limits: options.streamLimits, rc, resume, open: (sink) => service.subscribeToTask(rc, request.id, sink, after) });
    }),

    GetExtendedAgentCard: unary(async (_rc, request: GetExtendedAgentCardRequest) => {
      validateGetExtendedAgentCardRequest(request, limits);
      const extended = getExtendedAgentCard(card, options.extendedCard);
      // R-XCARD-2: only an authenticated caller gets it; with authentication off there is none.
      if (auth === undefined) throw EXTENDED_CARD_NEEDS_AUTHENTICATION();
      return extended;
    }),

    // Push notification configs (R-PUSH): refused with PUSH_NOTIFICATION_NOT_SUPPORTED when the
    // card does not declare the capability (R-CAP-1).
    CreateTaskPushNotificationConfig: unary(async (rc, request: TaskPushNotificationConfig, call) => {
      validateCreateTaskPushNotificationConfigRequest(request, limits);
      const configs = requirePush();
      requireExtensions(rc);
      checkDestination("url", request.url);
      call.setTaskId(request.taskId);
      return configs.create(rc.caller, request, call.protocolVersion);
    }),

    GetTaskPushNotificationConfig: unary(async (rc, request: GetTaskPushNotificationConfigRequest, call) => {
      validateGetTaskPushNotificationConfigRequest(request, limits);
      const configs = requirePush();
      requireExtensions(rc);
      call.setTaskId(request.taskId);
      return configs.get(rc.caller, request.taskId, request.id);
    }),

    ListTaskPushNotificationConfigs: unary(async (rc, request: ListTaskPushNotificationConfigsRequest, call) => {
      validateListTaskPushNotificationConfigsRequest(request, limits);
      const configs = requirePush();
      requireExtensions(rc);
      call.setTaskId(request.taskId);
      return configs.list(rc.caller, request.taskId, request.pageSize, request.pageToken);
    }),

    DeleteTaskPushNotificationConfig: unary(async (rc, request: DeleteTaskPushNotificationConfigRequest, call) => {
      validateDeleteTaskPushNotificationConfigRequest(request, limits);
      const configs = requirePush();
      requireExtensions(rc);
      call.setTaskId(request.taskId);
      await configs.delete(rc.caller, request.taskId, request.id);
      return create(EmptySchema);
    }),
  };
  return admission === undefined ? handlers : { ...handlers, [CALL_ADMISSION]: admission };
}

/** The A2A handlers, and (with authentication on) the admission that proves callers before decoding (call-admission.ts). */
export type A2AHandlerSet = Partial<A2AServiceHandlers> & { readonly [CALL_ADMISSION]?: CallAdmission };

const EXTENDED_CARD_NEEDS_AUTHENTICATION = () =>
  new AuthError(
    "unauthenticated",
    "AUTHENTICATION_REQUIRED",
    "the extended agent card is served only to authenticated callers (R-XCARD-2), and this server runs without authentication; its operator must set A2A_AUTH",
  );

/** The principal of every call when no authentication is configured (reserved: no credential maps to it, A-31). */
export const ANONYMOUS = ANONYMOUS_PRINCIPAL;

/** The lifecycle's view of one call. A class: its accessors are shared, not closures made per call. */
class EdgeRequestContext implements RequestContext {
  /** Made when first asked for: most calls activate no extension, and a Set costs ~150 bytes. */
  #activated: Set<string> | undefined;

  constructor(
    private readonly call: CallContext,
    readonly caller: Caller,
    readonly requestedExtensions: readonly string[],
  ) {}

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

  get protocolVersion(): "1.0" | "0.3" | undefined {
    return this.call.protocolVersion;
  }
}
