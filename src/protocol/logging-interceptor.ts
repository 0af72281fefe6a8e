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
 * One RPC's log line in the making: started when the call arrives, written once by finish().
 * Used by the interceptor below, and directly by the A2A adapter for its unary calls (which
 * the interceptor passes by: see createLoggingInterceptor).
 */
export class RpcLogLine {
  readonly record: RpcLogRecord = { fields: {} };
  /** Request metadata, logged (redacted) at debug level. */
  metadata: grpc.Metadata | undefined;
  private readonly started = performance.now();
  private readonly peer: string | undefined;
  /** Whether info lines are written (checked once: most calls end OK, and then only that matters). */
  private readonly infoEnabled: boolean;
  private logged = false;

  constructor(
    private readonly logger: Logger,
    private readonly path: string,
    private readonly call: { getPeer(): string },
  ) {
    // Why conditional: reading the peer goes through the HTTP/2 socket proxy (µs per call); when
    // info lines are off, only error lines are written, and those end with a status while the
    // stream (and its socket) is still there to ask.
    this.infoEnabled = logger.isLevelEnabled("info");
    this.peer = this.infoEnabled ? call.getPeer() : undefined;
  }

  get finished(): boolean {
    return this.logged;
  }

  /** Writes the line for the call's status; later calls do nothing. */
  finish(code: grpc.status, details: string | undefined): void {
    if (this.logged) return;
    this.logged = true;
    const failed = SERVER_FAULTS.has(code);
    if (!failed && !this.infoEnabled) return; // info off: debug is off too, and only error lines are written
    const level = failed ? "error" : QUIET_METHODS.has(this.path) ? "debug" : "info";
    if (!this.logger.isLevelEnabled(level)) return;
    // Split here, not per call: most lines are not written at warn level.
    const [, service = "", method = ""] = this.path.split("/");
    const line: Record<string, unknown> = {
      ...this.record.fields,
      service,
      method,
      grpc_code: code,
      grpc_status: grpc.status[code] ?? "UNKNOWN",
      duration_ms: Math.round((performance.now() - this.started) * 10) / 10,
      peer: this.peer ?? peerNow(this.call),
    };
    if (code !== grpc.status.OK && details) line["details"] = details;
    if (failed && this.record.err !== undefined) line["err"] = this.record.err;
    if (this.metadata && this.logger.isLevelEnabled("debug")) line["metadata"] = redactMetadata(this.metadata);
    this.logger[level](line, "rpc");
  }

  /** The call ended without a status from the server: the client cancelled, or its deadline passed. */
  finishUnanswered(deadline: grpc.Deadline): void {
    if (this.logged) return;
    const expired = deadline instanceof Date ? deadline.getTime() <= Date.now() : deadline <= Date.now();
    this.finish(expired ? grpc.status.DEADLINE_EXCEEDED : grpc.status.CANCELLED, expired ? "deadline exceeded" : "cancelled");
  }
}

/** Attaches a call's log record to its request metadata, where rpcLogRecord finds it. */
function attachLogRecord(metadata: grpc.Metadata, record: RpcLogRecord): void {
  (metadata as WithRecord)[RECORD] = record;
}

/**
 * A grpc-js server interceptor that writes exactly one log line per RPC, for every
 * service on the server: method, gRPC status (number and name), duration, peer, and
 * whatever the handler set with setLogField (e.g. task_id). Request metadata is
 * logged only at debug level, redacted.
 *
 * Calls whose path `loggedElsewhere` accepts pass through untouched: their handler writes the
 * line itself (an interceptor costs a few µs per call: a wrapping call object and its listeners).
 */
export function createLoggingInterceptor(logger: Logger, loggedElsewhere: (path: string) => boolean = () => false): grpc.ServerInterceptor {
  return (methodDescriptor, call) => {
    // grpc-js chains interceptors by what each returns: the call itself means "not intercepted".
    if (loggedElsewhere(methodDescriptor.path)) return call as grpc.ServerInterceptingCall;
    const line = new RpcLogLine(logger, methodDescriptor.path, call);
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => next({
        onReceiveMetadata: (md, nextMd) => {
          line.metadata = md;
          attachLogRecord(md, line.record);
          nextMd(md);
        },
        // grpc-js calls onCancel at the end of every call; it only counts when no status
        // went out through this interceptor: client cancel, deadline, or a forced close.
        onCancel: () => line.finishUnanswered(call.getDeadline()),
      }),
      sendStatus: (status, next) => {
        line.finish(status.code, status.details);
        next(status);
      },
    });
  };
}
