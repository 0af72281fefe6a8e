import * as grpc from "@grpc/grpc-js";
import type { Logger } from "pino";

/** What a handler adds to its RPC's log line (through CallContext.setLogField), and the error behind a 5xx-like status. */
export interface RpcLogRecord {
  readonly fields: Record<string, string>;
  err?: unknown;
}

/*
 * grpc-js hands the handler the very Metadata object the interceptor saw, so the
 * metadata object carries the call's log record, under a symbol. Why not a WeakMap keyed by
 * the metadata: an ephemeron entry and an identity hash per call, for the same join.
 */
const RECORD = Symbol("rpcLogRecord");
type WithRecord = grpc.Metadata & { [RECORD]?: RpcLogRecord };

/** The log record of the call that received this request metadata (undefined outside the interceptor). */
export function rpcLogRecord(metadata: grpc.Metadata): RpcLogRecord | undefined {
  return (metadata as WithRecord)[RECORD];
}

/** Metadata keys whose values are never logged (R-SEC-6). */
const SECRET_KEYS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"]);

/** Request metadata as a loggable object, credentials and binary values replaced by "[redacted]". */
export function redactMetadata(metadata: grpc.Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(metadata.getMap())) {
    out[key] = SECRET_KEYS.has(key) || key.endsWith("-bin") ? "[redacted]" : String(values);
  }
  return out;
}

/** The peer of a call that may be ending: a torn-down HTTP/2 session has no socket to ask. */
function peerNow(call: { getPeer(): string }): string {
  try {
    return call.getPeer();
  } catch {
    return "unknown";
  }
}

/** Codes that mean the server failed, logged at error level; the rest are the caller's business. */
const SERVER_FAULTS = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DATA_LOSS]);

/** Methods polled by orchestrators; their lines go to debug so they do not drown the log. */
const QUIET_METHODS = new Set(["/grpc.health.v1.Health/Check"]);

/**
 * A grpc-js server interceptor that writes exactly one log line per RPC, for every
 * service on the server: method, gRPC status (number and name), duration, peer, and
 * whatever the handler set with setLogField (e.g. task_id). Request metadata is
 * logged only at debug level, redacted.
 */
export function createLoggingInterceptor(logger: Logger): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    const started = performance.now();
    // Why conditional: reading the peer goes through the HTTP/2 socket proxy (µs per call); when
    // info lines are off, only error lines are written, and those end with a status while the
    // stream (and its socket) is still there to ask.
    const peer = logger.isLevelEnabled("info") ? call.getPeer() : undefined;
    const record: RpcLogRecord = { fields: {} };
    let metadata: grpc.Metadata | undefined;
    let logged = false;

    const finish = (code: grpc.status, details: string | undefined) => {
      if (logged) return;
      logged = true;
      const failed = SERVER_FAULTS.has(code);
      const level = failed ? "error" : QUIET_METHODS.has(methodDescriptor.path) ? "debug" : "info";
      if (!logger.isLevelEnabled(level)) return;
      // Split here, not per call: most lines are not written at warn level.
      const [, service = "", method = ""] = methodDescriptor.path.split("/");
      const line: Record<string, unknown> = {
        ...record.fields,
        service,
        method,
        grpc_code: code,
        grpc_status: grpc.status[code] ?? "UNKNOWN",
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        peer: peer ?? peerNow(call),
      };
      if (code !== grpc.status.OK && details) line["details"] = details;
      if (failed && record.err !== undefined) line["err"] = record.err;
      if (metadata && logger.isLevelEnabled("debug")) line["metadata"] = redactMetadata(metadata);
      logger[level](line, "rpc");
    };

    return new grpc.ServerInterceptingCall(call, {
      start: (next) => next({
        onReceiveMetadata: (md, nextMd) => {
          metadata = md;
          (md as WithRecord)[RECORD] = record;
          nextMd(md);
        },
        // grpc-js calls onCancel at the end of every call; it only counts when no status
        // went out through this interceptor: client cancel, deadline, or a forced close.
        onCancel: () => {
          if (logged) return;
          const deadline = call.getDeadline();
          const expired = deadline instanceof Date ? deadline.getTime() <= Date.now() : deadline <= Date.now();
          finish(expired ? grpc.status.DEADLINE_EXCEEDED : grpc.status.CANCELLED, expired ? "deadline exceeded" : "cancelled");
        },
      }),
      sendStatus: (status, next) => {
        finish(status.code, status.details);
        next(status);
      },
    });
  };
}
