import * as grpc from "@grpc/grpc-js";
import type { CallAdmission } from "../service/call-admission.js";
import type { CallObservers } from "../service/call-observer.js";
import { toGrpcStatus } from "./grpc-status.js";

/*
 * The A2A service's admission as a grpc-js server interceptor: it holds each call at its metadata
 * and lets it on only once CallAdmission has proved the caller. grpc-js reads a call's request
 * only after the metadata has gone on (the handler asks for it), so a refused call's message is
 * never read nor decoded. With no admission installed (authentication off) calls pass untouched.
 * Refused calls never reach the adapter, which reports the calls it runs; this reports them.
 */

export interface AdmissionInterceptorOptions {
  /** The A2A methods' full paths; other services pass through. */
  readonly paths: ReadonlySet<string>;
  /** The admission in force; undefined = none. Read per call. */
  admission(): CallAdmission | undefined;
  readonly observers: CallObservers;
}

export function createAdmissionInterceptor(options: AdmissionInterceptorOptions): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    const admission = options.admission();
    // grpc-js chains interceptors by what each returns: the call itself means "not intercepted".
    if (admission === undefined || !options.paths.has(methodDescriptor.path)) return call as grpc.ServerInterceptingCall;
    const intercepting: grpc.ServerInterceptingCall = new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, letThrough) => {
            const refuse = (error: unknown) => {
              const [, service = "", method = ""] = methodDescriptor.path.split("/");
              const observed = options.observers.begin(service, method, methodDescriptor.responseStream, call, metadata);
              const status = toGrpcStatus(error, (correlationId, cause) => {
                observed.fields.correlation_id = correlationId;
                observed.error = cause;
              });
              observed.end(status.code, status.details);
              intercepting.sendStatus(status);
            };
            let admitted: ReturnType<CallAdmission["admit"]>;
            try {
              const peerAddress = call.getConnectionInfo().remoteAddress ?? "unknown";
              admitted = admission.admit({ metadata, getAuthContext: () => call.getAuthContext(), peerAddress });
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
