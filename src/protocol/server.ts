import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";
import { file_grpc_health_v1_health } from "../../gen/es/grpc/health/v1/health_pb.js";
import { A2AService, file_lf_a2a_v1_a2a } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { formatHostPort, parseHostPort } from "../settings/parse-values.js";
import { createCallLog } from "../service/call-log.js";
import { CallObservers, type CallObserver } from "../service/call-observer.js";
import { createObservingInterceptor, servicePaths } from "./observing-interceptor.js";
import { remoteOf } from "./call-retention.js";
import {
  createServiceDefinition,
  createServiceImplementation,
  defaultToStatus,
  SHUTTING_DOWN,
  type A2AServiceHandlers,
  type AdapterRuntime,
  type ToStatus,
} from "./grpc-adapter.js";
import { HealthService } from "./health.js";
import { createReflectionService } from "./reflection.js";
import { file_google_rpc_error_details } from "../../gen/es/google/rpc/error_details_pb.js";
import { file_google_rpc_status } from "../../gen/es/google/rpc/status_pb.js";
import { StreamRegistry, trackingServer } from "./stream-registry.js";
import { createGuardInterceptor, type GuardedService, type ServiceGuard } from "./service-guard.js";
import { createAdmissionInterceptor } from "./admission-interceptor.js";
import { admissionOf, type CallAdmission } from "../service/call-admission.js";
import { A2AService as V03A2AService, file_a2a_v1_a2a } from "../../gen/es/a2a/v1/a2a_pb.js";
import { v03HandlersOf } from "../v03/v03-service.js";
import { pointToV03Service } from "../v03/v03-service-version.js";

export const HEALTH_SERVICE_NAME = "grpc.health.v1.Health";

export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Set = mutual TLS: a client certificate signed by this CA is required. */
  readonly clientCa?: Buffer | null;
}

export interface StartServerOptions {
  /** host:port; port 0 picks a free port (see RunningServer.port). */
  readonly listen: string;
  /** null/undefined = plaintext. */
  readonly tls?: ServerTls | null;
  /** Largest message received or sent, bytes. Default 4 MiB. */
  readonly maxMessageBytes?: number;
  readonly keepaliveTimeMs?: number;
  readonly keepaliveTimeoutMs?: number;
  readonly logger: Logger;
  /**
   * The A2A handlers. When given, the server reports SERVING at once; otherwise it reports
   * NOT_SERVING (and every A2A RPC answers UNIMPLEMENTED) until useHandlers is called.
   */
  readonly handlers?: Partial<A2AServiceHandlers>;
  /** Maps what a handler threw to the call's status. Default: INTERNAL "internal error". */
  readonly toStatus?: ToStatus;
  /**
   * Told of every call's start and end, after the RPC log (which is always the first observer):
   * metrics, tracing (see call-observer.ts). The first here wraps the handler's run outermost.
   */
  readonly observers?: ReadonlyArray<CallObserver<any>>;
  /**
   * Health and/or reflection calls that need a credential (A2A_AUTH_OPEN_SERVICES): they are
   * refused UNAVAILABLE until guardServices installs the guard, then only the guard lets them in.
   */
  readonly guardedServices?: readonly GuardedService[];
  /**
   * Serve A2A v0.3's a2a.v1.A2AService beside lf.a2a.v1.A2AService (A2A_V03, R-V03-2): its handlers
   * come with the v1.0 ones (withV03Handlers); reflection and health list it. Default off.
   */
  readonly serveV03?: boolean;
}

export type ShutdownHook = () => unknown;

export interface RunningServer {
  /** The bound port (the real one when listen asked for port 0). */
  readonly port: number;
  /** The call seam (log, metrics, traces) every binding reports its calls to. */
  readonly observers: CallObservers;
  /** host:port as bound. */
  readonly address: string;
  /** Installs (or replaces) the A2A handlers and reports SERVING. */
  useHandlers(handlers: Partial<A2AServiceHandlers>, toStatus?: ToStatus): void;
  /** Installs the guard of the guarded services (StartServerOptions.guardedServices). */
  guardServices(guard: ServiceGuard): void;
  /**
   * Work to do once the server has stopped serving (abort agents, close the store).
   * Hooks run in reverse order of registration, one at a time; a failing hook is logged
   * and the rest still run.
   */
  onShutdown(hook: ShutdownHook): void;
  /**
   * The first step of a shutdown, before the agents are given their grace: health goes
   * NOT_SERVING and new calls are refused, while the calls and streams already open go on
   * (they hear how their tasks end). shutdown() does it too.
   */
  stopAccepting(): void;
  /**
   * Graceful shutdown: health goes NOT_SERVING, no new calls are accepted, open streams
   * end with UNAVAILABLE "server is shutting down", in-flight unary calls may finish for
   * up to graceMs, then the server closes whatever is left, then the shutdown hooks run.
   * Calling it again returns the same promise.
   */
  shutdown(graceMs: number): Promise<void>;
}

const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Starts the gRPC server: A2A service, reflection (v1, v1alpha) and health, on one port. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { logger } = options;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const observers = new CallObservers(
    [createCallLog(logger), ...(options.observers ?? [])],
    (err, hook) => logger.warn({ err, hook }, "a call observer failed"),
    remoteOf,
  );
  let serviceGuard: ServiceGuard | undefined;
  const guardInterceptor = createGuardInterceptor({
    prefixes: guardedPrefixes(options.guardedServices ?? []),
    guard: () => serviceGuard,
    onError: (correlationId, err) => logger.error({ err, correlation_id: correlationId }, "checking the credentials of a health or reflection call failed"),
  });
  // The A2A handlers' admission (authentication before decoding), installed with them (useHandlers).
  let admission: CallAdmission | undefined = options.handlers && admissionOf(options.handlers);
  const serveV03 = options.serveV03 === true;
  const v03Paths = serveV03 ? servicePaths(V03A2AService) : new Set<string>();
  const a2aPaths = new Set([...servicePaths(A2AService), ...v03Paths]);
  const admissionInterceptor = createAdmissionInterceptor({ paths: a2aPaths, v03Paths, admission: () => admission, observers, hintV03: serveV03 });
  const server = new grpc.Server({
    "grpc.max_receive_message_length": maxMessageBytes,
    "grpc.max_send_message_length": maxMessageBytes,
    ...(options.keepaliveTimeMs !== undefined ? { "grpc.keepalive_time_ms": options.keepaliveTimeMs } : {}),
    ...(options.keepaliveTimeoutMs !== undefined ? { "grpc.keepalive_timeout_ms": options.keepaliveTimeoutMs } : {}),
    // The A2A adapter reports its own calls to the observers; health and reflection calls come through here.
    // The guard comes second, so it runs outside the observer, which records its refusals too.
    interceptors: [
      createObservingInterceptor(observers, a2aPaths),
      ...((options.guardedServices ?? []).length > 0 ? [guardInterceptor] : []),
      admissionInterceptor,
    ],
    // Channelz stays on although no channelz service is served: with it off, grpc-js 1.14 does
    // not track sessions, and forceShutdown() leaves the connections of stuck calls open.
  });

  const streams = new StreamRegistry();
  const runtime: AdapterRuntime = {
    handlers: options.handlers ?? {},
    toStatus: options.toStatus ?? defaultToStatus,
    closing: false,
    streams,
    observers,
    maxSendBytes: maxMessageBytes,
  };
  server.addService(createServiceDefinition(A2AService), createServiceImplementation(A2AService, runtime));
  // The v0.3 service: its own handlers (RPC names overlap with v1.0's), the rest shared.
  const v03Runtime: AdapterRuntime = { ...runtime, handlers: (options.handlers && v03HandlersOf(options.handlers)) ?? {} };
  if (serveV03) server.addService(createServiceDefinition(V03A2AService), createServiceImplementation(V03A2AService, v03Runtime));
  const installStatusMapping = (toStatus: ToStatus) => {
    v03Runtime.toStatus = toStatus; // R-V03-42: the v1.0 mapping, ErrorInfo and all
    runtime.toStatus = serveV03 ? (error, call) => toStatus(pointToV03Service(error), call) : toStatus;
  };
  installStatusMapping(runtime.toStatus);

  const a2aServiceNames = serveV03 ? [A2AService.typeName, V03A2AService.typeName] : [A2AService.typeName];
  const health = new HealthService(a2aServiceNames, options.handlers ? "SERVING" : "NOT_SERVING");
  // Health Watch and reflection streams are tracked too, so that shutdown can end them.
  health.addToServer(trackingServer(server, streams));
  createReflectionService(
    [
      { typeName: A2AService.typeName, file: file_lf_a2a_v1_a2a },
      ...(serveV03 ? [{ typeName: V03A2AService.typeName, file: file_a2a_v1_a2a }] : []),
      { typeName: HEALTH_SERVICE_NAME, file: file_grpc_health_v1_health },
    ],
    [file_google_rpc_error_details, file_google_rpc_status],
  ).addToServer(trackingServer(server, streams));

  const { host } = parseHostPort(options.listen);
  const port = await bind(server, options.listen, credentials(options.tls));
  const hooks: ShutdownHook[] = [];
  let stopping: Promise<void> | undefined;

  const stopAccepting = (): void => {
    health.setServing(false);
    runtime.closing = true;
    v03Runtime.closing = true;
  };
  const shutdown = async (graceMs: number): Promise<void> => {
    stopAccepting();
    // A stream whose last event was just published ends by itself in this turn: it ends OK, not UNAVAILABLE.
    await new Promise((resolve) => setImmediate(resolve));
    streams.closeAll(grpc.status.UNAVAILABLE, SHUTTING_DOWN);
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      new Promise<boolean>((resolve) => server.tryShutdown(() => resolve(true))),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (!drained) {
      logger.warn({ grace_ms: graceMs }, "calls still running after the shutdown grace period; closing them");
      server.forceShutdown();
    }
    for (const hook of hooks.reverse()) {
      try {
        await hook();
      } catch (err) {
        logger.error({ err }, "shutdown step failed");
      }
    }
  };

  return {
    port,
    observers,
    address: formatHostPort({ host, port }),
    useHandlers(handlers, toStatus) {
      runtime.handlers = handlers;
      v03Runtime.handlers = v03HandlersOf(handlers) ?? {};
      admission = admissionOf(handlers);
      if (toStatus) installStatusMapping(toStatus);
      if (!runtime.closing) health.setServing(true);
    },
    guardServices(guard) {
      serviceGuard = guard;
    },
    onShutdown(hook) {
      hooks.push(hook);
    },
    stopAccepting,
    shutdown(graceMs) {
      stopping ??= shutdown(graceMs);
      return stopping;
    },
  };
}

const GUARDED_PREFIXES: Readonly<Record<GuardedService, readonly string[]>> = {
  health: [`/${HEALTH_SERVICE_NAME}/`],
  reflection: ["/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/"],
};

function guardedPrefixes(services: readonly GuardedService[]): Map<string, GuardedService> {
  return new Map(services.flatMap((service) => GUARDED_PREFIXES[service].map((prefix) => [prefix, service] as const)));
}

function credentials(tls: ServerTls | null | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  // Node's TLS floor is 1.2 and 1.3 is preferred when both sides have it (ruling A-25).
  const clientCa = tls.clientCa ?? null;
  return grpc.ServerCredentials.createSsl(clientCa, [{ private_key: tls.key, cert_chain: tls.cert }], clientCa !== null);
}

function bind(server: grpc.Server, address: string, creds: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync(address, creds, (error, port) => (error ? reject(error) : resolve(port))));
}
