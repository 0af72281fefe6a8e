/**
 * The package's public surface for agent authors and for embedding the service.
 * An agent module needs only the types (`import type { Agent } from "a2a-grpc-server"`), and
 * may use the part builders and the A2A errors below.
 */
export type {
  Agent,
  AgentContext,
  AgentCardContribution,
  ArtifactInput,
  Caller,
  MessageInput,
  PartInput,
  PartFields,
  PartContentInput,
} from "./lifecycle/index.js";
// For agents: part builders, and the A2A errors an agent throws to refuse a call before it makes a task.
export { textPart, dataPart, filePart, dataOf, type PartOptions, type FileSource } from "./agents/parts.js";
export {
  A2AError,
  ContentTypeNotSupportedError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  InvalidParamsError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "./lifecycle/index.js";
export { AgentMisuseError, UnrepresentableJsonError } from "./lifecycle/index.js";
export type { TaskRepository, TaskScope, TaskChange, TaskQuery, TaskPage, StoredTask } from "./lifecycle/index.js";
export { createApp, type A2AApp, type AppOverrides } from "./app.js";
export { loadConfig, type Config } from "./config/index.js";
export { startServer, type RunningServer } from "./protocol/server.js";
export { a2aStatusMapper } from "./protocol/status-mapper.js";
export { createDemoAgent } from "./agents/demo/demo-agent.js";
