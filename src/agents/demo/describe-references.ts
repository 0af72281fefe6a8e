import type { Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { stateName } from "../../lifecycle/index.js";

/**
 * One line naming the tasks a message referenced (reference_task_ids), so a client can see
 * the agent consulted them (R-SEND-15); undefined when there are none.
 */
export function describeReferences(tasks: readonly Task[]): string | undefined {
  if (tasks.length === 0) return undefined;
  const items = tasks.map((t) => `${t.id} (${t.status ? stateName(t.status.state) : "no status"})`);
  return `Referenced tasks: ${items.join(", ")}.`;
}

/** Appends the reference line to a text, when there is one. */
export function withReferences(text: string, tasks: readonly Task[]): string {
  const line = describeReferences(tasks);
  return line === undefined ? text : `${text}\n${line}`;
}
