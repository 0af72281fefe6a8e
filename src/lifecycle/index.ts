/**
 * The lifecycle core's public face: what the protocol edge, the stores, push, auth and the app
 * use. Inside the core, files import each other directly; outside, only this file.
 */
export { statusMicros } from "./model/clock.js";
export {
  A2AError,
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidParamsError,
  InvalidRequestError,
  LimitExceededError,
  PushNotificationNotSupportedError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  type FieldViolation,
} from "./model/errors.js";
export { newId } from "./model/ids.js";
export { artifactLiteral, artifactUpdateLiteral, statusUpdateLiteral, streamResponseLiteral, taskStatusLiteral } from "./model/message-literals.js";
export type { PartFields } from "./model/part-input.js";
export { ACTIVE_STATES, INITIAL_STATE, isSettled, isTerminal, stateName } from "./model/task-state.js";
export type { Agent, AgentCardContribution, AgentContext, Caller } from "./ports/agent.js";
export type { Answer } from "./ports/answer.js";
export {
  CHANNELS,
  runStartChannel,
  storeCommitChannel,
  streamEndedChannel,
  streamEventChannel,
  type PushDelivery,
  type PushDeliveryStart,
  type RunObservation,
  type StoreCommit,
  type StreamEndReason,
  type StreamEnded,
  type StreamEvent,
  type TaskSettled,
} from "./ports/diagnostics.js";
export { eventAtVersion, type EventLogOptions, type EventLogRead, type LoggedEvent, type TaskEventLog } from "./ports/event-log.js";
export { silentLogger, type CoreLogger } from "./ports/logger.js";
export type { RunAdmission } from "./ports/run-admission.js";
export type { RunLeases, RunLost } from "./ports/run-leases.js";
export {
  DuplicateTaskError,
  InvalidChangeError,
  VersionConflictError,
  type CommitCallback,
  type ReadOptions,
  type StoredTask,
  type TaskChange,
  type TaskPage,
  type TaskQuery,
  type TaskRepository,
} from "./ports/task-repository.js";
export type { TaskScope } from "./ports/task-scope.js";
export { PageTokenCodec } from "./reads/page-token.js";
export type { StreamSink } from "./reads/task-feed.js";
export { TaskService, type RequestContext, type StreamHandle } from "./task-service.js";
export { RetentionSweeper } from "./writes/retention.js";
export { applyChange, mergeArtifact } from "./writes/task-change.js";
export { ReplyTooLargeError, TaskTooLargeError, type TaskSizeLimits } from "./writes/task-size.js";
// The package's public surface (src/index.ts) for agent authors and embedders.
export type { ArtifactInput, MessageInput, PartContentInput, PartInput } from "./ports/agent.js";
export { InvalidAgentResponseError } from "./model/errors.js";
export { AgentMisuseError } from "./model/agent-misuse.js";
export { UnrepresentableJsonError } from "./model/json-value.js";
