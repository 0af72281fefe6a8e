/**
 * The hostile-input suite's agent (test/support/hostile-run.ts, test/hostile/): bounded work whatever the
 * message says. "echo" gets a message reply, "hi" asks for more input (tasks that stay open, so
 * follow-ups, cancels and subscriptions reach them), anything else works, gets one small
 * artifact and completes. Plain JavaScript so that a server process loads it with
 * A2A_AGENT_MODULE=test/support/hostile-agent.mjs, as it loads any agent.
 */
/** @type {import("../../src/lifecycle/ports/agent.js").Agent} */
const agent = {
  card: { skills: [{ id: "h", name: "hostile", description: "target of the hostile suite", tags: ["test"] }] },
  async execute(ctx) {
    const first = ctx.message.parts[0]?.content;
    const text = first?.case === "text" ? first.value.slice(0, 100) : "";
    if (text === "echo") return ctx.reply("echo");
    await ctx.working();
    if (text === "hi") return ctx.requireInput("more?");
    await ctx.artifact({ parts: [text || "empty"] });
    await ctx.complete("done");
  },
};
export default agent;
