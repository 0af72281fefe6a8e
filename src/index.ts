/**
 * The package's public surface for agent authors and for embedding the service.
 * An agent module only needs the types: `import type { Agent } from "a2a-grpc-server"`.
 */
export type { Agent, AgentContext, AgentCardContribution, ArtifactInput, Caller, MessageInput, PartInput } from "./lifecycle/agent.js";
export type { TaskRepository, TaskScope, TaskChange, TaskQuery, TaskPage, StoredTask } from "./lifecycle/task-repository.js";
export { createApp, type A2AApp, type AppOverrides } from "./app.js";
export { loadConfig, type Config } from "./config/index.js";
export { startServer, type RunningServer } from "./protocol/server.js";
export { a2aStatusMapper } from "./protocol/status-mapper.js";
export { createDemoAgent } from "./agents/demo/demo-agent.js";
