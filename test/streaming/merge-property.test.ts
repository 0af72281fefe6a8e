/**
 * A-32 as a property: for random event sequences and readers that stall at random points, what a
 * slow reader receives, applied to the snapshot, gives exactly the task a reader that never
 * stalls ends with, and the same sequence of states. Through the real pipe (pipeStream and its
 * merged backlog); the writer below stands in for grpc-js's flow control.
 */
import * as grpc from "@grpc/grpc-js";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { StreamResponseSchema, TaskState, type Artifact, type StreamResponse, type TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { StreamSink } from "../../src/lifecycle/reads/task-feed.js";
import type { RequestContext } from "../../src/lifecycle/task-service.js";
import type { CallContext, StreamWriter } from "../../src/protocol/grpc-adapter.js";
import { pipeStream } from "../../src/service/stream-pipe.js";
import { BacklogBudget } from "../../src/streams/index.js";

/** A reader that takes `capacity` writes, then stalls until the test drains it. */
class StallingWriter implements StreamWriter<StreamResponse> {
  readonly written: StreamResponse[] = [];
  closed = false;
  private room: number;
  private drains: Array<() => void> = [];
  constructor(private readonly next: () => number) {
    this.room = next();
  }
  write(message: StreamResponse): boolean {
    this.written.push(message);
    return --this.room > 0;
  }
  waitForDrain(): Promise<void> {
    if (this.room > 0) return Promise.resolve();
    return new Promise((resolve) => this.drains.push(resolve));
  }
  drain(): void {
    this.room = this.next();
    for (const d of this.drains.splice(0)) d();
  }
}

function call(): CallContext {
  const controller = new AbortController();
  return {
    method: "SubscribeToTask",
    metadata: new grpc.Metadata(),
    signal: controller.signal,
    onEnd: () => () => undefined,
    setLogField: () => undefined,
    setTaskId: () => undefined,
    setPrincipal: () => undefined,
    getAuthContext: () => ({}),
    setResponseHeader: () => undefined,
  };
}
const rc: RequestContext = { caller: { tenant: "", principal: "p" }, requestedExtensions: [], activatedExtensions: new Set() };

/** A small deterministic PRNG (mulberry32), so a failure names the seed that reproduces it. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ClientTask {
  status: TaskStatus | undefined;
  artifacts: Artifact[];
}

/** What a client does with a stream: the snapshot, then each update applied as A-17 and the spec say. */
function apply(task: ClientTask, response: StreamResponse, states: TaskState[]): void {
  const p = response.payload;
  if (p.case === "statusUpdate") {
    task.status = p.value.status;
    if (states.at(-1) !== p.value.status!.state) states.push(p.value.status!.state);
  } else if (p.case === "artifactUpdate") {
    const update = p.value.artifact!;
    const at = task.artifacts.findIndex((a) => a.artifactId === update.artifactId);
    if (at < 0) task.artifacts.push(update);
    else if (!p.value.append) task.artifacts[at] = update;
    else {
      const old = task.artifacts[at]!;
      task.artifacts[at] = {
        ...old,
        parts: [...old.parts, ...update.parts],
        metadata: update.metadata ?? old.metadata,
        extensions: [...new Set([...old.extensions, ...update.extensions])],
      };
    }
  }
}

/** A random task stream: artifact updates (appends, replacements, three ids), status updates, and a final COMPLETED. */
function randomEvents(random: () => number, count: number): StreamResponse[] {
  const events: StreamResponse[] = [];
  let seq = 0;
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.2) {
      const state = random() < 0.7 ? TaskState.WORKING : TaskState.AUTH_REQUIRED;
      events.push(
        create(StreamResponseSchema, {
          payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state, timestamp: { seconds: BigInt(i) } } } },
        }),
      );
      continue;
    }
    const id = ["a", "b", "c"][Math.floor(random() * 3)]!;
    const metadata: JsonObject | undefined = random() < 0.2 ? { n: i } : undefined;
    const extensions = random() < 0.1 ? [`ext-${Math.floor(random() * 3)}`] : [];
    const parts = Array.from({ length: 1 + Math.floor(random() * 2) }, () => ({ content: { case: "text" as const, value: `${id}${seq++}` } }));
    events.push(
      create(StreamResponseSchema, {
        payload: {
          case: "artifactUpdate",
          value: {
            taskId: "t",
            contextId: "c",
            append: random() < 0.85,
            lastChunk: random() < 0.1,
            artifact: { artifactId: id, name: random() < 0.3 ? `n${i}` : "", parts, metadata, extensions },
          },
        },
      }),
    );
  }
  events.push(
    create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.COMPLETED } } } }),
  );
  return events;
}

/** Plays `events` into a pipe, `stall` deciding each reader window; returns what the reader got. */
async function play(events: StreamResponse[], writer: StallingWriter, random: () => number): Promise<StreamResponse[]> {
  let sink!: StreamSink;
  const piping = pipeStream({
    call: call(),
    out: writer,
    limits: { streamBytes: 1 << 24, streamEntries: 1 << 20, entryBytes: 1 << 20, shared: new BacklogBudget(1 << 30) },
    rc,
    open: async (s) => ((sink = s), { close: () => undefined }),
  });
  await Promise.resolve();
  const snapshot = create(StreamResponseSchema, { payload: { case: "task", value: { id: "t", contextId: "c", status: { state: TaskState.WORKING } } } });
  sink.next(snapshot);
  for (const event of events) {
    sink.next(event);
    if (random() < 0.05) writer.drain(); // the reader catches up now and then, at random points
    if (random() < 0.05) await new Promise((resolve) => setImmediate(resolve));
  }
  sink.end();
  while (!(await Promise.race([piping.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]))) writer.drain();
  return writer.written;
}

function fold(received: StreamResponse[]): { task: ClientTask; states: TaskState[] } {
  const first = received[0]!.payload;
  if (first.case !== "task") throw new Error("the stream must start with the task");
  const task: ClientTask = { status: first.value.status, artifacts: [...first.value.artifacts] };
  const states: TaskState[] = [first.value.status!.state];
  for (const r of received.slice(1)) apply(task, r, states);
  return { task, states };
}

test("A-32 property: over 200 random streams, a reader stalling at random points ends with exactly the fast reader's task and the same sequence of states", async () => {
  let merged = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const random = prng(seed);
    const events = randomEvents(random, 20 + Math.floor(random() * 300));
    const fast = await play(events, new StallingWriter(() => Infinity), random);
    const slow = await play(events, new StallingWriter(() => 1 + Math.floor(random() * 4)), random);
    expect(fast).toHaveLength(events.length + 1);
    const want = fold(fast);
    const got = fold(slow);
    try {
      expect(got.task).toEqual(want.task);
      expect(got.states).toEqual(want.states);
    } catch (error) {
      throw new Error(`seed ${seed}: ${(error as Error).message}`);
    }
    merged += fast.length - slow.length;
  }
  expect(merged).toBeGreaterThan(1000); // the slow readers did get merged responses
});
