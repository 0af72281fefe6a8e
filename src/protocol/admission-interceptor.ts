import * as grpc from "@grpc/grpc-js";
import type { CallAdmission } from "../service/call-admission.js";
import type { CallObservers } from "../service/call-observer.js";
import { toGrpcStatus } from "./grpc-status.js";
import { checkV03Version, pointToV03Service } from "../v03/v03-service-version.js";

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
  /** Those of them that are v0.3's (a2a.v1.A2AService): the v0.3 version rule, then the same credentials (R-V03-2). */
  readonly v03Paths?: ReadonlySet<string>;
  /** A v0.3 service is served: a v1.0 refusal of a missing version names it. */
  readonly hintV03?: boolean;
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
            const refuse = (refusal: unknown) => {
              const error = options.hintV03 === true ? pointToV03Service(refusal) : refusal;
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
              const v03 = options.v03Paths?.has(methodDescriptor.path) === true;
              if (v03) checkV03Version(metadata);
              admitted = admission.admit({ metadata, getAuthContext: () => call.getAuthContext(), peerAddress, protocolVersion: v03 ? "0.3" : "1.0" });
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
