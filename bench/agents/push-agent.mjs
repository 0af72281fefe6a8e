/**
 * The push benchmark's agent (same work as bench/servers/sdk-push-server.ts's executor): the
 * message "push <events> <intervalMs>" makes a task that publishes <events> updates, status and
 * artifact in turn, <intervalMs> apart, then completes. Each update's text is "e<i>@<ms>": its
 * number and the wall-clock time it was published, so the receiver can check order and latency.
 */
const stamp = () => (performance.timeOrigin + performance.now()).toFixed(3);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @type {import("../../src/lifecycle/ports/agent.js").Agent} */
const agent = {
  card: {
    name: "push bench",
    description: "Publishes updates for the push benchmark",
    skills: [{ id: "push", name: "push", description: "Publishes", tags: ["bench"] }],
  },
  async execute(ctx) {
    const part = ctx.message.parts[0]?.content;
    const [, eventsText = "10", intervalText = "0"] = (part?.case === "text" ? part.value : "").split(" ");
    const events = Number(eventsText);
    const interval = Number(intervalText);
    for (let i = 0; i < events; i++) {
      if (i % 2 === 0) await ctx.working(`e${i}@${stamp()}`);
      else await ctx.artifact({ artifactId: `a${i}`, parts: [`e${i}@${stamp()}`] });
      if (interval > 0) await sleep(interval);
    }
    await ctx.complete(`e${events}@${stamp()}`);
  },
};
export default agent;
