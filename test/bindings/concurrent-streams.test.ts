/**
 * R-BIND-3 (§3.5.2): concurrent streams on different bindings receive the same events in the same
 * order. One task, two subscribers on every binding at once, and the agent publishes:
 *
 * 1. in lockstep (each event once every subscriber has the one before): status updates between
 *    appends to three artifacts. No reader falls behind, so every subscriber must get exactly the
 *    published events.
 * 2. in a burst (as fast as the agent can write): updates that A-32's merging for readers that
 *    fall behind cannot combine (each artifact update replaces its own artifact, status updates
 *    are never consecutive), so however far a binding lets a reader fall behind, the list must
 *    still be exactly the same. (Appends in a burst may be merged, by A-32, and are then equal in
 *    content only: on gRPC grpc-js reports back-pressure after 16 unflushed messages, on SSE after
 *    16 KiB, so the two merge at different points.)
 *
 * Every subscriber's list is compared whole, timestamps included.
 */
import { clone, create, type JsonValue } from "@bufbuild/protobuf";
import {
  ArtifactSchema,
  GetTaskRequestSchema,
  StreamResponseSchema,
  SubscribeToTaskRequestSchema,
  TaskSchema,
  TaskStatusSchema,
  type StreamResponse,
  type Task,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { startBindingsSetup, watchStream, type BindingsSetup } from "./bindings-support.js";
import { json } from "./normalise.js";

let s: BindingsSetup;
beforeAll(async () => {
  s = await startBindingsSetup();
});
afterAll(async () => {
  await s?.close();
});

const LOCKSTEP_EVENTS = 20;
const BURST_EVENTS = 40;
const SUBSCRIBERS_PER_BINDING = 2;

test("R-BIND-3: subscribers on every binding at once get the same events in the same order", async () => {
  const { task, run } = await s.heldTask(s.drivers[0]!, "ctl fan out");
  const taskId = task.id;

  const { received, subscribers, names, endedEarly } = await subscribeEverywhere(taskId);

  // 1. Lockstep: status updates between appends to three artifacts.
  const appended = new Set<string>();
  for (let k = 1; k <= LOCKSTEP_EVENTS; k++) {
    if (k % 5 === 0) await run.ctx.working(`step ${k}`);
    else {
      const artifactId = `part-${k % 3}`;
      await run.ctx.artifact({ artifactId, name: artifactId, parts: [`chunk ${k}`] }, { append: appended.has(artifactId) });
      appended.add(artifactId);
    }
    await Promise.race([received.reach(names, 1 + k), endedEarly]);
  }
  // 2. Burst: every artifact update replaces its own artifact; a status update after every third.
  for (let k = 1; k <= BURST_EVENTS; k++) {
    if (k % 4 === 0) await run.ctx.working(`burst ${k}`);
    else await run.ctx.artifact({ artifactId: `burst-${k}`, name: `burst-${k}`, parts: [`whole ${k}`] });
  }
  await run.ctx.complete("fanned out");
  run.finish();

  const lists = new Map<string, JsonValue[]>();
  for (const sub of subscribers)
    lists.set(
      sub.name,
      (await sub.events).map((e: StreamResponse) => json(StreamResponseSchema, e)),
    );
  const reference = lists.get(names[0]!)!;
  // The task snapshot, every published event, the final status (R-SUB-3, A-2).
  expect(reference).toHaveLength(1 + LOCKSTEP_EVENTS + BURST_EVENTS + 1);
  const last = reference.at(-1) as { statusUpdate?: { status?: { state?: string } } };
  expect(last.statusUpdate?.status?.state).toBe("TASK_STATE_COMPLETED");
  for (const [name, events] of lists) expect({ subscriber: name, events }).toEqual({ subscriber: name, events: reference });
});

test("R-BIND-3, A-32: in a burst of appends every subscriber ends with the same task, merged or not", async () => {
  const { task, run } = await s.heldTask(s.drivers[0]!, "ctl burst of appends");
  const { subscribers } = await subscribeEverywhere(task.id);
  const appended = new Set<string>();
  for (let k = 1; k <= BURST_EVENTS; k++) {
    const artifactId = `part-${k % 3}`;
    await run.ctx.artifact({ artifactId, name: artifactId, parts: [`chunk ${k}`] }, { append: appended.has(artifactId), lastChunk: k > BURST_EVENTS - 3 });
    appended.add(artifactId);
  }
  await run.ctx.complete("appended");
  run.finish();

  const stored = await s.drivers[0]!.get(create(GetTaskRequestSchema, { id: task.id }));
  const want = { status: json(TaskStatusSchema, stored.status!), artifacts: stored.artifacts.map((a) => json(ArtifactSchema, a)) };
  expect(stored.artifacts.flatMap((a) => a.parts)).toHaveLength(BURST_EVENTS);
  for (const sub of subscribers) {
    const held = applied(await sub.events);
    const got = { status: json(TaskStatusSchema, held.status!), artifacts: held.artifacts.map((a) => json(ArtifactSchema, a)) };
    expect({ subscriber: sub.name, task: got }).toEqual({ subscriber: sub.name, task: want });
  }
});

/** Subscribers on every binding, each counted as its events arrive; resolves once all have the snapshot. */
async function subscribeEverywhere(taskId: string) {
  const received = new Counter();
  const subscribers = s.drivers.flatMap((driver) =>
    Array.from({ length: SUBSCRIBERS_PER_BINDING }, (_, i) => {
      const name = `${driver.name}#${i + 1}`;
      const stream = watchStream((onEvent) =>
        driver.subscribe(create(SubscribeToTaskRequestSchema, { id: taskId }), {
          onEvent: (event) => (onEvent(event), received.add(name)),
        }),
      );
      return { name, ...stream };
    }),
  );
  await Promise.all(subscribers.map((sub) => sub.opened));
  // A stream that ends while the test waits for its next event fails the wait at once.
  const endedEarly = Promise.race(subscribers.map((sub) => sub.events.then(() => Promise.reject(new Error(`${sub.name} ended early`)))));
  endedEarly.catch(() => undefined);
  return { received, subscribers, names: subscribers.map((sub) => sub.name), endedEarly };
}

/** The task a client holds once it has applied a stream's events to the snapshot (§3.5.2, what A-32 keeps). */
function applied(events: StreamResponse[]): Task {
  const first = events[0]?.payload;
  if (first?.case !== "task") throw new Error(`the first event is ${first?.case}, not the task`);
  const task = clone(TaskSchema, first.value);
  for (const { payload } of events.slice(1)) {
    if (payload.case === "statusUpdate") task.status = payload.value.status;
    if (payload.case !== "artifactUpdate") continue;
    const artifact = payload.value.artifact!;
    const at = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
    if (at < 0) task.artifacts.push(artifact);
    else if (payload.value.append) task.artifacts[at]!.parts.push(...artifact.parts);
    else task.artifacts[at] = artifact;
  }
  return task;
}

/** Events received per subscriber, and a wait until each has at least so many (no timed sleeps). */
class Counter {
  private readonly counts = new Map<string, number>();
  private waiter: (() => void) | undefined;

  add(name: string): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    this.waiter?.();
  }

  async reach(names: readonly string[], count: number): Promise<void> {
    while (names.some((name) => (this.counts.get(name) ?? 0) < count)) await new Promise<void>((resolve) => (this.waiter = resolve));
    this.waiter = undefined;
  }
}
