import { create } from "@bufbuild/protobuf";
import { AgentSkillSchema, type AgentSkill } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AgentCardContribution } from "../../lifecycle/index.js";
import { DEFAULT_LONG_SECONDS, MAX_LONG_SECONDS } from "./demo-command.js";

/** The keywords as a newcomer types them; used in hints and error replies. */
export const KEYWORD_HINT = `hello, story, trip, long [seconds], fail, reject, auth`;

function skill(init: Omit<Partial<AgentSkill>, "$typeName">): AgentSkill {
  return create(AgentSkillSchema, { tags: ["demo"], inputModes: ["text/plain"], outputModes: ["text/plain"], ...init });
}

/**
 * What the demo contributes to the agent card: one skill per behaviour, its examples being
 * messages a client can send as-is. The first word of the message picks the behaviour.
 */
export const demoCard: AgentCardContribution = {
  name: "A2A demo agent",
  description:
    "Shows the A2A task lifecycle: the first word of your text message picks a behaviour " +
    `(${KEYWORD_HINT}); anything else is echoed. Messages that reference other tasks ` +
    "(reference_task_ids) get those tasks' ids and states mentioned in the answer.",
  version: "1.0.0",
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [
    skill({
      id: "echo",
      name: "Echo",
      description: "Answers with a single message and no task: your text echoed back, with the list of keywords.",
      tags: ["demo", "message"],
      examples: ["hello", "hello, what can you do?"],
    }),
    skill({
      id: "story",
      name: "Streamed story",
      description:
        "Creates a task that works, then streams the artifact `story` in several chunks (append, last_chunk) and completes. " +
        "Best watched with SendStreamingMessage.",
      tags: ["demo", "task", "streaming", "artifact"],
      examples: ["story", "chunks"],
    }),
    skill({
      id: "trip",
      name: "Trip planner (multi-turn)",
      description:
        "Asks where you want to fly to (TASK_STATE_INPUT_REQUIRED). Answer with a message carrying the same task_id; " +
        "the task then completes with the artifact `itinerary`.",
      tags: ["demo", "task", "multi-turn", "input-required"],
      examples: ["trip", "Lisbon (sent with the task_id of the trip task)"],
    }),
    skill({
      id: "long",
      name: "Long-running job",
      description:
        `Works for N seconds (default ${DEFAULT_LONG_SECONDS}, at most ${MAX_LONG_SECONDS}), posting a progress status every second. ` +
        "Cancel it with CancelTask, follow it with SubscribeToTask, or send with return_immediately and poll GetTask.",
      tags: ["demo", "task", "cancel", "subscribe"],
      examples: ["long", "long 30"],
    }),
    skill({
      id: "fail",
      name: "Failure",
      description: "Starts working, then throws: the task ends TASK_STATE_FAILED with a readable status message.",
      tags: ["demo", "task", "failed"],
      examples: ["fail"],
    }),
    skill({
      id: "reject",
      name: "Rejection",
      description: "Rejects the task right away: TASK_STATE_REJECTED with the reason in the status message.",
      tags: ["demo", "task", "rejected"],
      examples: ["reject"],
    }),
    skill({
      id: "auth",
      name: "In-task authorization",
      description:
        "Pauses in TASK_STATE_AUTH_REQUIRED, explaining which out-of-band credential a real agent would need. " +
        "Any follow-up message on the same task stands for 'done, authorized' and completes it.",
      tags: ["demo", "task", "auth-required"],
      examples: ["auth", "done (sent with the task_id of the auth task)"],
    }),
  ],
};
