import * as grpc from "@grpc/grpc-js";
import type { CallObservers } from "../service/call-observer.js";

/**
 * A grpc-js server interceptor that reports the calls of the services the A2A adapter does not
 * own (health, reflection) to the same observers; `ownPaths` (the A2A service's) pass through
 * untouched, their adapter reports them. `around` does not apply here: the interceptor does not
 * run those handlers.
 */
export function createObservingInterceptor(observers: CallObservers, ownPaths: ReadonlySet<string>): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    // grpc-js chains interceptors by what each returns: the call itself means "not intercepted".
    if (ownPaths.has(methodDescriptor.path)) return call as grpc.ServerInterceptingCall;
    const [, service = "", method = ""] = methodDescriptor.path.split("/");
    const observed = observers.begin(service, method, methodDescriptor.responseStream, call, undefined);
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, nextMetadata) => {
            observed.setMetadata(metadata);
            nextMetadata(metadata);
          },
          // grpc-js calls onCancel at the end of every call; it only counts when no status
          // went out through this interceptor: client cancel, deadline, or a forced close.
          onCancel: () => observed.endUnanswered(call.getDeadline()),
        }),
      sendStatus: (status, next) => {
        observed.end(status.code, status.details);
        next(status);
      },
    });
  };
}

/** The paths of every method of a service, e.g. "/lf.a2a.v1.A2AService/SendMessage". */
export function servicePaths(service: { typeName: string; methods: ReadonlyArray<{ name: string }> }): Set<string> {
  return new Set(service.methods.map((m) => `/${service.typeName}/${m.name}`));
}
