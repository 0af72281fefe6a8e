import type { Caller } from "./agent.js";

/**
 * Whether a caller may start another agent run (limits live outside the core: src/limits).
 * `admit` throws (a LimitExceededError) to refuse, before anything is written; otherwise it
 * returns the function the service calls once that run has ended.
 */
export interface RunAdmission {
  admit(caller: Caller): () => void;
}
