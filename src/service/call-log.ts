import type { Logger } from "pino";
import { a2aVersionOf, type CallEnded, type CallObserver, type CallStart } from "./call-observer.js";
import type { CallMetadata } from "./face.js";
import { Code, codeName } from "./status-code.js";

/** Metadata keys whose values are never logged (R-SEC-6). */
const SECRET_KEYS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"]);

/** Request metadata as a loggable object, credentials and binary values replaced by "[redacted]". */
export function redactMetadata(metadata: CallMetadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(metadata.getMap())) {
    out[key] = SECRET_KEYS.has(key) || key.endsWith("-bin") ? "[redacted]" : String(values);
  }
  return out;
}

/** Codes that mean the server failed, logged at error level; the rest are the caller's business. */
const SERVER_FAULTS = new Set<number>([Code.INTERNAL, Code.UNKNOWN, Code.DATA_LOSS]);

/** Health Check is polled by orchestrators: its lines go to debug so they do not drown the log. */
function isQuiet(call: CallStart): boolean {
  return call.method === "Check" && call.service === "grpc.health.v1.Health";
}

/**
 * The RPC log as a call observer: exactly one line per call, for every service on the server,
 * written when the call ends: service, method, gRPC status (number and name), duration, peer,
 * task_id and principal when known, and whatever the handler set with setLogField. Request
 * metadata is logged only at debug level, redacted. The message of every line is "rpc".
 *
 * Its per-call state is the peer read at arrival, when info lines are on. Why then and not at
 * the end: a stream's socket may be gone by then. Why only then: reading the peer goes through
 * the HTTP/2 socket proxy (µs per call), and with info lines off only error lines are written,
 * which end with a status while the stream (and its socket) is still there to ask.
 */
export function createCallLog(logger: Logger): CallObserver<string | undefined> {
  return {
    started(call: CallStart): string | undefined {
      return logger.isLevelEnabled("info") ? call.peer : undefined;
    },
    ended(call: CallEnded, peerAtStart: string | undefined): void {
      const failed = SERVER_FAULTS.has(call.code);
      if (!failed && peerAtStart === undefined) return; // info was off at arrival: only error lines are written
      const level = failed ? "error" : isQuiet(call) ? "debug" : "info";
      if (!logger.isLevelEnabled(level)) return;
      const line: Record<string, unknown> = { ...call.fields };
      if (call.taskId !== undefined) line["task_id"] = call.taskId;
      if (call.principal !== undefined) line["principal"] = call.principal;
      line["service"] = call.service;
      line["method"] = call.method;
      line["a2a_version"] = a2aVersionOf(call.service);
      if (call.binding !== "grpc") line["binding"] = call.binding;
      line["grpc_code"] = call.code;
      line["grpc_status"] = codeName(call.code);
      line["duration_ms"] = Math.round(call.durationMs * 10) / 10;
      line["peer"] = peerAtStart ?? call.peer;
      if (call.details) line["details"] = call.details;
      if (failed && call.error !== undefined) line["err"] = call.error;
      if (logger.isLevelEnabled("debug")) line["metadata"] = redactMetadata(call.metadata);
      logger[level](line, "rpc");
    },
  };
}
