import { toGrpcStatus } from "./grpc-status.js";
import type { ToStatus } from "./grpc-adapter.js";

/**
 * The A2A error mapping as the server applies it; the correlation id of an unexpected error
 * goes on the RPC's log line, which also carries the error itself.
 */
export const a2aStatusMapper: ToStatus = (error, call) => toGrpcStatus(error, (correlationId) => call.setLogField("correlation_id", correlationId));
