import { setTimeout as sleep } from "node:timers/promises";
import { Role, TaskState, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { Agent, AgentContext } from "../../lifecycle/index.js";
import { demoCard, KEYWORD_HINT } from "./demo-card.js";
import { firstText, parseDemoCommand, type DemoCommand, type DemoKeyword } from "./demo-command.js";
import { withReferences } from "./describe-references.js";

export interface DemoAgentOptions {
  /** Pause between the chunks of the story artifact; 0 in tests. Default 50 ms. */
  readonly stepDelayMs?: number;
  /** Length of one "second" of the long task; tests shrink it. Default 1000 ms. */
  readonly tickMs?: number;
}

export const TRIP_QUESTION = "Where do you want to fly to?";
export const FAIL_MESSAGE = "the demo was asked to fail";

const STORY = [
  "Once upon a time, a client sent a message to an agent. ",
  "The agent opened a task and said it was working. ",
  "It streamed its answer as an artifact, one chunk at a time, ",
  "and when the last chunk was out, it marked the task completed. The end.",
];

/** Builds the demo agent; the first word of the user's text picks the behaviour (see demo-card.ts). */
export function createDemoAgent(options: DemoAgentOptions = {}): Agent {
  const stepDelayMs = options.stepDelayMs ?? 50;
  const tickMs = options.tickMs ?? 1000;

  async function execute(ctx: AgentContext): Promise<void> {
    // A message on an existing task answers the question that paused it.
    if (ctx.task !== undefined) return continueTask(ctx, ctx.task);
    const command = parseDemoCommand(ctx.message);
    switch (command.keyword) {
      case "echo":
        return echo(ctx, command);
      case "story":
        return story(ctx);
      case "trip":
        await ctx.working("Planning a trip.");
        return ctx.requireInput(TRIP_QUESTION);
      case "long":
        return long(ctx, command.seconds);
      case "fail":
        await ctx.working("Working on it... (about to fail on purpose)");
        // Thrown, not ctx.fail(): shows how the service turns an agent error into FAILED.
        throw new Error(FAIL_MESSAGE);
      case "reject":
        return ctx.reject('The demo agent rejects this task on purpose: you asked for "reject".');
      case "auth":
        await ctx.working("Checking access to your calendar.");
        return ctx.requireAuth(
          "Authorization required (demo): a real agent would need an OAuth 2.0 access token for the " +
            "'calendar.read' scope, obtained out of band from the calendar provider, not sent in this chat. " +
            "Send any message on this task (same task_id) once you have 'authorized', and the task completes.",
        );
    }
  }

  async function echo(ctx: AgentContext, command: DemoCommand): Promise<void> {
    const text =
      command.text === ""
        ? `This demo reads text only and your message had no text part. Send a text message starting with one of: ${KEYWORD_HINT}.`
        : `You said: "${command.text}". Start a message with one of these keywords to see more of A2A: ${KEYWORD_HINT}.`;
    await ctx.reply(withReferences(text, ctx.referenceTasks));
  }

  async function story(ctx: AgentContext): Promise<void> {
    await ctx.working("Writing a story.");
    for (const [i, chunk] of STORY.entries()) {
      if (i > 0 && !(await pause(stepDelayMs, ctx.signal))) return;
      const last = i === STORY.length - 1;
      const text = last ? withReferences(chunk, ctx.referenceTasks) : chunk;
      await ctx.artifact({ artifactId: "story", name: "story", parts: [text] }, { append: i > 0, lastChunk: last });
    }
    await ctx.complete("The story is complete.");
  }

  async function long(ctx: AgentContext, seconds: number): Promise<void> {
    const { signal } = ctx;
    try {
      await ctx.working(`Starting a ${seconds}-second job. Cancel it with CancelTask.`);
      for (let step = 1; step <= seconds; step++) {
        if (!(await pause(tickMs, signal))) return;
        await ctx.working(`step ${step}/${seconds}`);
      }
      if (signal.aborted) return;
      const report = withReferences(`Ran ${seconds} steps of one second each without being canceled.`, ctx.referenceTasks);
      await ctx.artifact({ artifactId: "report", name: "report", parts: [report] }, { lastChunk: true });
      await ctx.complete("The long job is done.");
    } catch (error) {
      // Canceled while an update was being written: the service owns the task now; stay quiet.
      if (signal.aborted) return;
      throw error;
    }
  }

  async function continueTask(ctx: AgentContext, task: Task): Promise<void> {
    switch (pausedBehaviour(task, ctx.message.messageId)) {
      case "trip": {
        const answer = firstText(ctx.message);
        await ctx.working(answer === "" ? "No destination given." : `Looking up flights to ${answer}.`);
        if (answer === "") return ctx.requireInput(`I need a destination to plan the trip. ${TRIP_QUESTION}`);
        const itinerary = withReferences(
          `Itinerary to ${answer}: depart Monday 09:00, arrive ${answer} the same day; return Friday 18:00. (Demo data.)`,
          ctx.referenceTasks,
        );
        await ctx.artifact({ artifactId: "itinerary", name: "itinerary", parts: [itinerary] }, { lastChunk: true });
        return ctx.complete(`Your trip to ${answer} is planned.`);
      }
      case "auth":
        await ctx.working("Thanks, checking the calendar now.");
        return ctx.complete(withReferences("Authorized (demo): your calendar is free all week.", ctx.referenceTasks));
      default:
        // Nothing of ours is waiting on this task; say so rather than leave it hanging.
        await ctx.working();
        return ctx.complete(`The demo was not waiting for anything on this task. Try a new message: ${KEYWORD_HINT}.`);
    }
  }

  return { card: demoCard, execute };
}

/**
 * Which behaviour paused a task: the keyword of its first user message, else the state it is
 * paused in (the history may be trimmed).
 */
function pausedBehaviour(task: Task, currentMessageId: string): DemoKeyword | undefined {
  const opener = task.history.find((m) => m.role === Role.USER && m.messageId !== currentMessageId);
  const keyword = opener ? parseDemoCommand(opener).keyword : undefined;
  if (keyword === "trip" || keyword === "auth") return keyword;
  if (task.status?.state === TaskState.INPUT_REQUIRED) return "trip";
  if (task.status?.state === TaskState.AUTH_REQUIRED) return "auth";
  return undefined;
}

/** Waits, or stops early on cancel: false when the signal was aborted. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

const demoAgent: Agent = createDemoAgent();
export default demoAgent;
