/**
 * The benchmark's agent for our server: a task that goes working, gets one small text
 * artifact and completes, the same work as the SDK server's agent in
 * bench/servers/sdk-server.ts. Plain JavaScript so the compiled server (dist/) loads it
 * as a production deployment would: A2A_AGENT_MODULE=bench/agents/trivial-agent.mjs.
 */
/** @type {import("../../src/lifecycle/ports/agent.js").Agent} */
const agent = {
  card: {
    name: "bench",
    description: "Trivial agent for the benchmark",
    skills: [{ id: "answer", name: "answer", description: "Answers", tags: ["bench"] }],
  },
  async execute(ctx) {
    await ctx.working();
    await ctx.artifact({ name: "answer", parts: ["4"] });
    await ctx.complete();
  },
};
export default agent;
