/**
 * The agent of the replica benchmark (bench/postgres.ts), plain JavaScript for the compiled
 * server. "steps <n> <ms>": working, then n one-part artifact chunks <ms> apart, each carrying
 * the wall-clock time of its write (`at=<ms since the epoch>`, sub-millisecond), then
 * COMPLETED. "hang": working until stopped. Anything else: working, one artifact, COMPLETED.
 */
const pause = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

/** @type {import("../../src/lifecycle/ports/agent.js").Agent} */
const agent = {
  card: {
    name: "replica bench",
    description: "Scripted steps for the replica benchmark",
    skills: [{ id: "steps", name: "steps", description: "Steps", tags: ["bench"] }],
  },
  async execute(ctx) {
    const part = ctx.message.parts[0]?.content;
    const [command, a, b] = (part?.case === "text" ? part.value : "").split(" ");
    await ctx.working();
    if (command === "steps") {
      for (let i = 0; i < Number(a) && !ctx.signal.aborted; i++) {
        await pause(Number(b), ctx.signal);
        await ctx.artifact(
          { artifactId: "steps", parts: [`at=${performance.timeOrigin + performance.now()}`] },
          { append: i > 0, lastChunk: i === Number(a) - 1 },
        );
      }
      return ctx.complete();
    }
    if (command === "hang") {
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
      return;
    }
    await ctx.artifact({ name: "answer", parts: ["4"] });
    await ctx.complete();
  },
};
export default agent;
