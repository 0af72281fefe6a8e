/**
 * google.rpc.Code, the status codes the core's errors map to on every binding (gRPC sends them
 * as they are; the HTTP bindings translate them, R-BIND-38). Same numbers as grpc-js's `status`.
 */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type Code = (typeof Code)[keyof typeof Code];

const NAMES: readonly string[] = Object.keys(Code);

/** The code's name ("NOT_FOUND"), or "UNKNOWN" for a number outside the table. */
export function codeName(code: number): string {
  return NAMES[code] ?? "UNKNOWN";
}
