/**
 * The fan-out benchmark's agent for our server (bench/fan-out.ts), loaded with
 * A2A_AGENT_MODULE=bench/agents/fanout-agent.mjs. A task goes WORKING and then waits until the
 * benchmark says go over the server process's IPC channel (once its subscribers are attached):
 *   { bench: "fanout-go", taskId, events, intervalMs, yieldEach, padBytes, replace }
 * Then it publishes `events` artifact updates, each text starting with `#seq=<i>;t=<ms>;`
 * (t = performance.timeOrigin + performance.now(), the publish time), as fast as the server
 * takes them (intervalMs 0), with an event-loop turn after each (yieldEach, as an agent
 * awaiting a model's next token gives), or one every intervalMs, completes the task, and reports
 *   { bench: "fanout-published", taskId, publishMs, contentSha256 }
 * (contentSha256, when go.hash: what the artifact holds when done, hashed as
 * bench/lib/grpc-subscriber-child.ts hashes what a subscriber rebuilt: each text part followed by a
 * NUL byte; opt-in, so that the single-stream figures do not pay for hashing).
 * `replace`: every update replaces one artifact (the store keeps one chunk); otherwise chunks
 * are appended to one artifact, as a token stream would be. Same work as bench/servers/sdk-fanout-server.ts.
 */
import { createHash } from "node:crypto";

const waiting = new Map(); // taskId -> resolve(go)
const early = new Map(); // taskId -> go that came before the task was waiting

process.on("message", (msg) => {
  if (msg === null || typeof msg !== "object" || msg.bench !== "fanout-go") return;
  const resolve = waiting.get(msg.taskId);
  if (resolve) {
    waiting.delete(msg.taskId);
    resolve(msg);
  } else early.set(msg.taskId, msg);
});
process.channel?.unref(); // the benchmark's IPC channel must not keep a stopping server alive

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @type {import("../../src/lifecycle/ports/agent.js").Agent} */
const agent = {
  card: {
    name: "bench-fanout",
    description: "Publishes a numbered burst of artifact updates when the benchmark says go",
    skills: [{ id: "fanout", name: "fanout", description: "Streams numbered chunks", tags: ["bench"] }],
  },
  async execute(ctx) {
    await ctx.working();
    const taskId = ctx.taskId;
    const go = early.get(taskId) ?? (await new Promise((resolve) => waiting.set(taskId, resolve)));
    early.delete(taskId);
    const pad = "x".repeat(go.padBytes);
    const started = performance.now();
    const content = createHash("sha256");
    for (let i = 0; i < go.events; i++) {
      const text = `#seq=${i};t=${(performance.timeOrigin + performance.now()).toFixed(3)};${pad}`;
      if (go.hash && (!go.replace || i === go.events - 1)) content.update(text).update("\0");
      await ctx.artifact(
        { artifactId: "out", name: "out", parts: [text] },
        go.replace ? { append: false, lastChunk: true } : { append: i > 0, lastChunk: i === go.events - 1 },
      );
      if (go.intervalMs > 0) await sleep(go.intervalMs);
      else if (go.yieldEach) await new Promise((resolve) => setImmediate(resolve));
    }
    const publishMs = performance.now() - started;
    await ctx.complete();
    process.send?.({ bench: "fanout-published", taskId, publishMs, contentSha256: content.digest("hex") });
  },
};
export default agent;
