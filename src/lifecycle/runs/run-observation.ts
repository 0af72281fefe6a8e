import type { AgentRun } from "./agent-run.js";
import { runEndChannel, runStartChannel, type RunObservation } from "../ports/diagnostics.js";

/**
 * The two publish points of an agent run (see diagnostics.ts), kept out of the service so that
 * its run loop reads as before: `isRunObserved()` is one property read when nobody listens.
 */
export function isRunObserved(): boolean {
  return runStartChannel.hasSubscribers || runEndChannel.hasSubscribers;
}

export function startRunObservation(run: AgentRun, resumed: boolean): RunObservation {
  return { contextId: run.contextId, taskId: run.taskId, resumed, startedAt: performance.now(), durationMs: undefined, failed: false, tracerState: undefined };
}

/**
 * Calls the agent inside the stores the start's observers bound (runStores), after telling
 * them: a tracer makes the run's span current there, so the agent's own spans nest under it.
 */
export function invokeObserved<T>(observation: RunObservation, invoke: () => T): T {
  return runStartChannel.runStores(observation, invoke);
}

export function endRunObservation(observation: RunObservation, run: AgentRun, failed: boolean): void {
  observation.durationMs = performance.now() - observation.startedAt;
  observation.taskId = run.taskId;
  observation.failed = failed;
  if (runEndChannel.hasSubscribers) runEndChannel.publish(observation);
}
