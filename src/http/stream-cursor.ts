import type { StreamResponse } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { STREAM_RESUME_EXTENSION } from "../streams/index.js";

/**
 * The resume cursor a stream event carries, if any: an HTTP binding sends it as the SSE
 * event's `id:`, so a reconnect with Last-Event-ID continues right after it.
 */
export function cursorOf(response: StreamResponse): string | undefined {
  const { payload } = response;
  if (payload.case !== "task" && payload.case !== "statusUpdate" && payload.case !== "artifactUpdate") return undefined;
  const marked = payload.value.metadata?.[STREAM_RESUME_EXTENSION];
  const cursor = typeof marked === "object" && marked !== null && !Array.isArray(marked) ? marked["cursor"] : undefined;
  return typeof cursor === "string" ? cursor : undefined;
}
