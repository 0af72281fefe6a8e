import * as grpc from "@grpc/grpc-js";
import type { PeerCertificate } from "node:tls";
import { toGrpcStatus } from "./grpc-status.js";
import type { GuardedService } from "../auth/auth-config.js";

/*
 * Credentials for the services beside A2A (health, reflection) when the operator closes them
 * (A2A_AUTH_OPEN_SERVICES). Their handlers are the libraries' own (grpc-health-check,
 * @grpc/reflection), so the check sits in a grpc-js server interceptor: it holds the call's
 * metadata until the guard has proved who calls, then lets the call on, or ends it with the
 * guard's refusal mapped like any A2A refusal (UNAUTHENTICATED / PERMISSION_DENIED with an
 * ErrorInfo). The request is never read for a refused call.
 */

/** A service beside A2A that may need a credential. */
export type { GuardedService };

/** What a guard may look at: the call's metadata and its TLS peer (mTLS). */
export interface GuardedCall {
  readonly metadata: grpc.Metadata;
  getAuthContext(): { readonly sslPeerCertificate?: PeerCertificate };
}

/** Proves who calls `service`: returns (or resolves to) the caller, throws (or rejects with) the refusal. */
export type ServiceGuard = (call: GuardedCall, service: GuardedService) => { readonly principal: string } | Promise<{ readonly principal: string }>;

/** Until a guard is installed (the app is still starting), calls to guarded services get this. */
export const GUARD_NOT_READY = "the server is starting; retry shortly";

export interface GuardInterceptorOptions {
  /** Full method path prefix ("/grpc.health.v1.Health/") -> the service it guards. */
  readonly prefixes: ReadonlyMap<string, GuardedService>;
  /** The guard in force; undefined while the app is starting. Read per call. */
  guard(): ServiceGuard | undefined;
  /** An unexpected failure of the guard (the client gets INTERNAL with this correlation id). */
  onError(correlationId: string, error: unknown): void;
}

/** A grpc-js server interceptor that lets calls to the guarded services through only with the guard's consent. */
export function createGuardInterceptor(options: GuardInterceptorOptions): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    const service = guardedServiceOf(options.prefixes, methodDescriptor.path);
    // grpc-js chains interceptors by what each returns: the call itself means "not intercepted".
    if (service === undefined) return call as grpc.ServerInterceptingCall;
    const intercepting: grpc.ServerInterceptingCall = new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, letThrough) => {
            const refuse = (error: unknown) => intercepting.sendStatus(toGrpcStatus(error, options.onError));
            const guard = options.guard();
            if (guard === undefined) {
              intercepting.sendStatus({ code: grpc.status.UNAVAILABLE, details: GUARD_NOT_READY, metadata: new grpc.Metadata() });
              return;
            }
            let admitted: ReturnType<ServiceGuard>;
            try {
              admitted = guard({ metadata, getAuthContext: () => call.getAuthContext() }, service);
            } catch (error) {
              refuse(error);
              return;
            }
            if (admitted instanceof Promise) admitted.then(() => letThrough(metadata), refuse);
            else letThrough(metadata);
          },
        }),
    });
    return intercepting;
  };
}

function guardedServiceOf(prefixes: ReadonlyMap<string, GuardedService>, path: string): GuardedService | undefined {
  const slash = path.indexOf("/", 1);
  return slash < 0 ? undefined : prefixes.get(path.slice(0, slash + 1));
}
