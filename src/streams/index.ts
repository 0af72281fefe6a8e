/**
 * Streams that keep their clients: a slow client's backlog merged without loss, the
 * budgets that bound it, and what streams report for metrics.
 */
export { StreamBacklog, type BacklogItem } from "./stream-backlog.js";
export { BacklogBudget, type BacklogLimits } from "./backlog-budget.js";
export {
  eventWritten,
  openStreamCount,
  streamEnded,
  streamEndedChannel,
  streamEventChannel,
  streamOpened,
  type StreamEndReason,
} from "./stream-diagnostics.js";
export {
  RESUME_CURSOR_HEADER,
  STREAM_RESUME_EXTENSION,
  decodeCursor,
  encodeCursor,
  heartbeat,
  isHeartbeat,
  streamResumeDeclaration,
  withCursor,
} from "./stream-resume.js";
