import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "@jest/globals";

const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Run in a child with V8's natives syntax, which can optimize a function on demand and tell
 * whether its optimized code survived (and with type feedback recorded from every function's first
 * call, so that what V8 has seen does not depend on how warm the path is). The natives are compiled by `new Function` at run time,
 * so no loader parses them. Each check: feed one stream (or task) until the function on its
 * per-event path is optimized, then start a second one with new objects, and ask whether the
 * function is still optimized after the second one's events.
 */
const CHILD = `
const prepare = new Function("f", "%PrepareFunctionForOptimization(f)");
const optimizeNow = new Function("f", "%OptimizeFunctionOnNextCall(f)");
const status = new Function("f", "return %GetOptimizationStatus(f)");
const OPTIMIZED = 16; // V8's OptimizationStatus::kOptimized
const optimized = (f) => (status(f) & OPTIMIZED) !== 0;

const { EventHub } = await import("./src/events/event-hub.ts");
const { TaskFeed } = await import("./src/lifecycle/reads/task-feed.ts");
const { TaskWriter } = await import("./src/lifecycle/writes/task-writer.ts");
const { MemoryTaskRepository } = await import("./src/storage/memory/memory-task-repository.ts");
const { artifactLiteral, newTaskLiteral, taskStatusLiteral, textPartLiteral, timestampLiteral } = await import("./src/lifecycle/model/message-literals.ts");

const chunk = (i) => artifactLiteral({ artifactId: "out", name: "out", description: "", parts: [textPartLiteral("#" + i)], metadata: undefined, extensions: [] });
const tick = () => new Promise((resolve) => setImmediate(resolve));
// One literal per kind of event, as the task writer makes them (eventOf).
const statusEvent = (taskId, version, state) => ({ kind: "status", version, taskId, contextId: "c", status: taskStatusLiteral(state, undefined, timestampLiteral(1n, 0)) });
const artifactEvent = (taskId, version) => ({ kind: "artifact", version, taskId, contextId: "c", artifact: chunk(version), append: version > 1, lastChunk: false });

// 1. The hub's delivery to a stream: hub -> TaskFeed -> the stream's sink. The sink here is one
// class for every stream, so that what is checked is the hub's and the feed's part of the path.
class Sink {
  written = 0;
  ended = undefined;
  next() { this.written++; }
  end() { this.ended?.(); }
  fail() {}
}
const hub = new EventHub();
async function openStream(taskId) {
  const out = new Sink();
  const feed = new TaskFeed(hub, out, undefined);
  feed.attachAtCreation(taskId);
  const piping = new Promise((resolve) => (out.ended = resolve));
  // As a task's stream begins: a status update (WORKING), then the chunks.
  hub.publish(statusEvent(taskId, 1, 2));
  let version = 1;
  return {
    out,
    publish(n) {
      for (let i = 0; i < n; i++) {
        version++;
        hub.publish(artifactEvent(taskId, version));
      }
    },
    async end() {
      version++;
      hub.publish(statusEvent(taskId, version, 3));
      await piping;
    },
  };
}
const publish = EventHub.prototype.publish;
prepare(publish);
// A whole stream first, so that every kind of event has been through the path (as on a server that
// has run), then collected: V8 forgets a call target that the collector took, as it does between streams.
let warm = await openStream("t0");
warm.publish(20);
await warm.end();
warm = undefined;
await tick();
gc();
const first = await openStream("t1");
first.publish(200);
optimizeNow(publish);
first.publish(1);
const hubOptimized = optimized(publish);
// The next stream's events (the first one's end, taken once per stream, is another branch).
const second = await openStream("t2");
second.publish(50);
const hubStillOptimized = optimized(publish);
await first.end();
await second.end();

// 2. A task's writer: the agent's write, applied at once on the memory store.
const repository = new MemoryTaskRepository();
const writerHub = new EventHub();
const scope = { tenant: "", principal: "p" };
const onIdle = () => {};
function writerFor(taskId) {
  const { version } = repository.create(scope, newTaskLiteral(taskId, "c", taskStatusLiteral(1, undefined, timestampLiteral(1n, 0)), []), true);
  return new TaskWriter({ repository, hub: writerHub, scope, taskId, contextId: "c", version, state: 1, onIdle });
}
const writes = (writer, from, n) => {
  for (let i = from; i < from + n; i++) writer.write({ kind: "artifact", artifact: chunk(i), append: i > 0, lastChunk: false, fresh: true }, true);
};
const write = TaskWriter.prototype.write;
prepare(write);
const one = writerFor("w1");
writes(one, 0, 200);
optimizeNow(write);
writes(one, 200, 1);
const writerOptimized = optimized(write);
const two = writerFor("w2");
writes(two, 0, 50);
const writerStillOptimized = optimized(write);

console.log(JSON.stringify({ hubOptimized, hubStillOptimized, delivered: first.out.written + second.out.written, writerOptimized, writerStillOptimized }));
`;

// Why this matters: every stream's events go through one optimized path (the hub's delivery,
// the feed, the stream's sink; the agent's write through the task's writer). Where that
// path called a function made per stream or per task (a closure), V8 had optimized it for the
// first stream's function: the next stream's first event threw the code away and V8 compiled it
// again, 25-200 ms of compiler CPU per stream, counted in the server's CPU per event
// (seen in `npm run bench -- streaming --per-turn`).
test("issue 15 item 2 (per-turn cost): a new stream or task keeps the per-event path's optimized code (no call target made per stream)", () => {
  const out = execFileSync(
    process.execPath,
    ["--allow-natives-syntax", "--no-lazy-feedback-allocation", "--expose-gc", "--import", "tsx", "--input-type=module", "-e", CHILD],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual({
    hubOptimized: true,
    hubStillOptimized: true,
    // WORKING, 201 chunks and the closing update on the first stream, WORKING, 50 and the closing one on the second: the path was really taken.
    delivered: 255,
    writerOptimized: true,
    writerStillOptimized: true,
  });
}, 30_000);
