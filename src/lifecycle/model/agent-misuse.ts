/** Thrown to an agent that uses its context against the rules (or gives what cannot be sent); the run logs it. */
export class AgentMisuseError extends Error {
  override name = "AgentMisuseError";
}
