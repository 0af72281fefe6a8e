import * as grpc from "@grpc/grpc-js";
import pg from "pg";
import { TaskState, type StreamResponse, type Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { RESUME_CURSOR_HEADER, STREAM_RESUME_EXTENSION, encodeCursor } from "../../src/streams/index.js";
import { a2aMetadata, fetchTask, killAll, send, sendRequest, subscribe, taskOf } from "../durability/service-process.js";
import { unary } from "../foundation/helpers.js";
import { reasonOf } from "../streaming/support.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { replicaAppName, startReplica, startReplicas, type Replica } from "./replica-cluster.js";

/**
 * Any replica answers any call: three server processes on one PostgreSQL database, driven
 * through real gRPC clients (ts-proto), each call sent to the replica the test names.
 */
let db: TestDatabase;
let a: Replica;
let b: Replica;
let c: Replica;
const ENV = { A2A_LEASE_MS: "2000" };

beforeAll(async () => {
  db = await createTestDatabase("replicas");
  [a, b, c] = await startReplicas(["A", "B", "C"], db.url, ENV);
}, 60_000);
afterAll(async () => {
  await killAll();
  await db.drop();
});

/** Returns once a follow-up claimed task `taskId` (or wrote it already): polled without a pause, so as to be early in its run. */
async function untilClaimed(client: pg.Client, taskId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await client.query<{ claimed: boolean }>(
      // version 3: A created the task, then WORKING, then INPUT_REQUIRED; past it a follow-up wrote.
      "SELECT owner IS NOT NULL OR version > 3 AS claimed FROM a2a_tasks WHERE id = $1",
      [taskId],
    );
    if (rows[0]?.claimed) return;
    if (Date.now() > deadline) throw new Error(`task ${taskId} was not claimed within 10 s`);
  }
}

/** The PostgreSQL backends (process ids) of the replicas' LISTEN connections. */
async function listenBackendsOf(client: pg.Client, replicas: readonly Replica[]): Promise<number[]> {
  const names = replicas.map((r) => replicaAppName(r.name));
  const { rows } = await client.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ANY($1) AND query LIKE 'LISTEN %'",
    [names],
  );
  expect(rows).toHaveLength(replicas.length);
  return rows.map((row) => row.pid);
}

async function withDatabase<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function stepsOf(events: readonly StreamResponse[]): string[] {
  const texts: string[] = [];
  for (const event of events) {
    const p = event.payload;
    const parts = p?.$case === "task" ? p.value.artifacts.flatMap((x) => x.parts) : p?.$case === "artifactUpdate" ? (p.value.artifact?.parts ?? []) : [];
    for (const part of parts) if (part.content?.$case === "text") texts.push(part.content.value.split(" at=")[0]!);
  }
  return texts;
}

function lastState(events: readonly StreamResponse[]): TaskState | undefined {
  const last = events[events.length - 1]?.payload;
  if (last?.$case === "statusUpdate") return last.value.status?.state;
  if (last?.$case === "task") return last.value.status?.state;
  return undefined;
}

function statusEvents(events: readonly StreamResponse[], state: TaskState): number {
  return events.filter((e) => e.payload?.$case === "statusUpdate" && e.payload.value.status?.state === state).length;
}

async function hangingTaskOn(replica: Replica): Promise<Task> {
  const task = taskOf(await send(replica.client, "hang", { returnImmediately: true }));
  await replica.line(new RegExp(`agent: hang ${task.id} on ${replica.name}`), "stderr");
  return task;
}

describe("replicas on one PostgreSQL database", () => {
  it("R-STREAM: SendMessage on A, SubscribeToTask on B and C: both get the live events in order, once each, then the terminal one", async () => {
    const task = taskOf(await send(a.client, "steps 6 60", { returnImmediately: true }));
    const onB = subscribe(b.client, task.id);
    const onC = subscribe(c.client, task.id);
    expect(await onB.end).toBeUndefined();
    expect(await onC.end).toBeUndefined();
    for (const sub of [onB, onC]) {
      expect(sub.events[0]!.payload?.$case).toBe("task");
      expect(stepsOf(sub.events)).toEqual(["step 0", "step 1", "step 2", "step 3", "step 4", "step 5"]);
      expect(lastState(sub.events)).toBe(TaskState.TASK_STATE_COMPLETED);
      // Once: as a status event, or in the first event if the task ended before this subscriber's
      // snapshot was read (a loaded machine: the stream then holds only that snapshot).
      const first = sub.events[0]!.payload;
      const inSnapshot = first?.$case === "task" && first.value.status?.state === TaskState.TASK_STATE_COMPLETED ? 1 : 0;
      expect(statusEvents(sub.events, TaskState.TASK_STATE_COMPLETED) + inSnapshot).toBe(1);
    }
    expect((await fetchTask(c.client, task.id)).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("R-CANCEL: CancelTask on B stops the agent running on A; the task ends CANCELED once; A's blocking caller and C's subscriber hear it", async () => {
    const blocking = send(a.client, "hang");
    const { id } = await (async () => {
      const line = await a.line(/agent: hang \S+ on A/, "stderr");
      return { id: line.split(" ")[2]! };
    })();
    const onC = subscribe(c.client, id);
    await onC.received(1);
    const canceled = await unary(b.client, b.client.cancelTask, { tenant: "", id }, a2aMetadata());
    expect(canceled.error).toBeUndefined();
    expect(canceled.response?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await a.line(new RegExp(`agent: stopped ${id} on A`), "stderr");
    // Blocking SendMessage on A: answered with the task as B settled it.
    expect(taskOf(await blocking).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(await onC.end).toBeUndefined();
    expect(statusEvents(onC.events, TaskState.TASK_STATE_CANCELED)).toBe(1);
    expect(lastState(onC.events)).toBe(TaskState.TASK_STATE_CANCELED);
    const stored = await fetchTask(b.client, id);
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // Nothing the stopped agent or its run did afterwards changed the task.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await fetchTask(c.client, id)).toEqual(stored);
  });

  it("A-4: CancelTask on C of a task already CANCELED on B returns it; on A's finished task it is TASK_NOT_CANCELABLE", async () => {
    const hanging = await hangingTaskOn(a);
    expect((await unary(b.client, b.client.cancelTask, { tenant: "", id: hanging.id }, a2aMetadata())).response?.status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    expect((await unary(c.client, c.client.cancelTask, { tenant: "", id: hanging.id }, a2aMetadata())).response?.status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    const done = taskOf(await send(a.client, "steps 1 0"));
    const refused = await unary(c.client, c.client.cancelTask, { tenant: "", id: done.id }, a2aMetadata());
    expect(refused.error?.details).toMatch(/is TASK_STATE_COMPLETED and can no longer be canceled/);
  });

  it("R-SEND-10: a follow-up to an INPUT_REQUIRED task lands on any replica, and its run is that replica's", async () => {
    const asked = taskOf(await send(a.client, "ask"));
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const again = taskOf(await send(b.client, "more", { task: asked }));
    expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(again.status?.message?.parts[0]?.content).toEqual({ $case: "text", value: "and then? (asked on B)" });
    const finished = taskOf(await send(c.client, "finish", { task: asked }));
    expect(finished.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(finished.artifacts[0]?.parts[0]?.content).toEqual({ $case: "text", value: "finished on C" });
    expect((await fetchTask(a.client, asked.id)).history.map((m) => m.parts[0]?.content?.$case === "text" && m.parts[0].content.value)).toEqual([
      "ask",
      "on it (A)",
      "what else? (asked on A)",
      "more",
      "got more on B",
      "and then? (asked on B)",
      "finish",
      "got finish on C",
      "finished on C",
    ]);
  });

  it("two follow-ups to one INPUT_REQUIRED task on two replicas at once: never two runs at once (the other is refused, or runs after)", async () => {
    let refusals = 0;
    for (let round = 0; round < 5; round++) {
      const asked = taskOf(await send(a.client, "ask"));
      const results = await Promise.all([send(b.client, "again", { task: asked }), send(c.client, "again", { task: asked })]);
      const refused = results.filter((r) => r.error !== undefined);
      expect(refused.length).toBeLessThan(2);
      for (const r of refused) expect(r.error!.details).toMatch(/being worked on|is TASK_STATE_WORKING/);
      refusals += refused.length;
      // Each accepted follow-up's run answered before the next follow-up got in: no interleaving.
      const texts = (await fetchTask(a.client, asked.id)).history.map((m) => (m.parts[0]?.content?.$case === "text" ? m.parts[0].content.value : ""));
      const agains = texts.flatMap((t, i) => (t === "again" ? [i] : []));
      expect(agains).toHaveLength(2 - refused.length);
      for (const i of agains) {
        expect(texts[i + 1]).toMatch(/^got again on [BC]$/);
        expect(texts[i + 2]).toBe(`and then? (asked on ${texts[i + 1]!.slice(-1)})`);
      }
    }
    process.stderr.write(`concurrent follow-ups: ${refusals} of 5 rounds refused one\n`);
  });

  it("R-SEND-10: the same two follow-ups while B and C hear the notices of A's writes only after their claims: one runs to INPUT_REQUIRED, the other is refused; no INTERNAL, no hang", async () => {
    // Notices come over a LISTEN connection of their own, not ordered with the pool's: under load a
    // replica may hear the notice of A's INPUT_REQUIRED after it claimed the task. Pausing B's and
    // C's LISTEN backends (SIGSTOP) until a claim is made makes that order certain.
    await withDatabase(async (client) => {
      const listeners = await listenBackendsOf(client, [b, c]);
      for (let round = 0; round < 4; round++) {
        for (const pid of listeners) process.kill(pid, "SIGSTOP");
        let paused = true;
        try {
          const asked = taskOf(await send(a.client, "ask"));
          const followUps = Promise.all([b, c].map((r) => send(r.client, "again", { task: asked, deadlineMs: 10_000 })));
          await untilClaimed(client, asked.id);
          await new Promise((resolve) => setTimeout(resolve, round)); // the late notices land at different points of the run
          for (const pid of listeners) process.kill(pid, "SIGCONT");
          paused = false;
          const results = await followUps;
          const answered = results.filter((r) => r.error === undefined).map(taskOf);
          for (const r of results) if (r.error !== undefined) expect(r.error.details).toMatch(/being worked on|is TASK_STATE_WORKING/);
          expect(answered.length).toBeGreaterThan(0);
          for (const t of answered) expect(t.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
          const texts = (await fetchTask(a.client, asked.id)).history.map((m) => (m.parts[0]?.content?.$case === "text" ? m.parts[0].content.value : ""));
          const agains = texts.flatMap((t, i) => (t === "again" ? [i] : []));
          expect(agains).toHaveLength(answered.length);
          for (const i of agains) {
            expect(texts.slice(i + 1, i + 3)).toEqual([expect.stringMatching(/^got again on [BC]$/), expect.stringMatching(/^and then\? \(asked on [BC]\)$/)]);
          }
        } finally {
          if (paused) for (const pid of listeners) process.kill(pid, "SIGCONT");
        }
      }
    });
  });

  it("blocking SendMessage on B waits for its run while A and C stream the same task", async () => {
    const asked = taskOf(await send(a.client, "ask"));
    const onA = subscribe(a.client, asked.id);
    const onC = subscribe(c.client, asked.id);
    await Promise.all([onA.received(1), onC.received(1)]);
    const finished = taskOf(await send(b.client, "finish", { task: asked }));
    expect(finished.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    for (const sub of [onA, onC]) {
      expect(await sub.end).toBeUndefined();
      expect(lastState(sub.events)).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });

  it("ListTasks pages and GetTask answer the same on every replica (page tokens work across replicas)", async () => {
    for (let i = 0; i < 5; i++) taskOf(await send([a, b, c][i % 3]!.client, "steps 1 0"));
    const first = await unary(
      a.client,
      a.client.listTasks,
      { tenant: "", contextId: "", status: 0, pageSize: 2, pageToken: "", includeArtifacts: false },
      a2aMetadata(),
    );
    expect(first.error).toBeUndefined();
    const second = await unary(
      b.client,
      b.client.listTasks,
      { tenant: "", contextId: "", status: 0, pageSize: 2, pageToken: first.response!.nextPageToken, includeArtifacts: false },
      a2aMetadata(),
    );
    expect(second.error).toBeUndefined();
    expect(second.response!.tasks).toHaveLength(2);
    expect(new Set([...first.response!.tasks, ...second.response!.tasks].map((t) => t.id)).size).toBe(4);
    expect(second.response!.totalSize).toBe(first.response!.totalSize);
  });
});

/** Metadata activating the stream-resume extension, with a cursor to resume after. */
function resumeMetadata(cursor?: string): grpc.Metadata {
  const md = a2aMetadata();
  md.set("a2a-extensions", STREAM_RESUME_EXTENSION);
  if (cursor !== undefined) md.set(RESUME_CURSOR_HEADER, cursor);
  return md;
}

function cursorOf(event: StreamResponse): string {
  const p = event.payload;
  const metadata = p?.$case === "task" || p?.$case === "statusUpdate" || p?.$case === "artifactUpdate" ? p.value.metadata : undefined;
  const cursor = (metadata?.[STREAM_RESUME_EXTENSION] as { cursor?: unknown } | undefined)?.cursor;
  if (typeof cursor !== "string") throw new Error(`event ${JSON.stringify(event)} has no cursor`);
  return cursor;
}

function resumeOn(replica: Replica, taskId: string, cursor: string, tenant = "") {
  return subscribe(replica.client, taskId, { tenant, metadata: resumeMetadata(cursor) });
}

describe("resuming streams across replicas (A-33, PostgreSQL event log)", () => {
  let id = "";
  let cursors: string[] = [];
  const ALL_STEPS = ["step 0", "step 1", "step 2", "step 3", "step 4", "step 5", "step 6", "step 7"];

  it("A-33: a stream on A with the extension, dropped mid-task; resumed on B with A's cursor: exactly the events after it, no snapshot, to the end", async () => {
    const call = a.client.sendStreamingMessage(sendRequest("steps 8 60"), resumeMetadata());
    const first = subscribe(a.client, "", { call });
    await first.received(4); // the task, WORKING, step 0, step 1
    call.cancel();
    await first.end;
    const seen = first.events.slice(0, 4);
    expect(seen[0]!.payload?.$case).toBe("task");
    id = seen[0]!.payload?.$case === "task" ? seen[0]!.payload.value.id : "";
    cursors = seen.map(cursorOf);
    const onB = resumeOn(b, id, cursors[3]!);
    expect(await onB.end).toBeUndefined();
    expect(onB.events.map((e) => e.payload?.$case)).not.toContain("task");
    expect(stepsOf([...seen, ...onB.events])).toEqual(ALL_STEPS);
    expect(lastState(onB.events)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusEvents(onB.events, TaskState.TASK_STATE_COMPLETED)).toBe(1);
    // Each event B sent carries a cursor too: resuming on C from one of them gives what followed it.
    const onC = resumeOn(c, id, cursorOf(onB.events[2]!));
    expect(await onC.end).toBeUndefined();
    expect([...stepsOf(onB.events.slice(0, 3)), ...stepsOf(onC.events)]).toEqual(ALL_STEPS.slice(2));
    expect(lastState(onC.events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("A-33/A-31: a cursor beyond the task is STREAM_CURSOR_EXPIRED on any replica; another tenant's resume of the task is TASK_NOT_FOUND", async () => {
    const ahead = await resumeOn(c, id, encodeCursor(id, 999)).end;
    expect(ahead?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(reasonOf(ahead?.metadata)).toBe("STREAM_CURSOR_EXPIRED");
    const other = await resumeOn(b, id, cursors[1]!, "another-tenant").end;
    expect(other?.code).toBe(grpc.status.NOT_FOUND);
    expect(reasonOf(other?.metadata)).toBe("TASK_NOT_FOUND");
  });

  it("A-33: after a restart of B (SIGKILL, then a new process), B resumes from A's cursor out of the table", async () => {
    await b.kill();
    b = await startReplica("B", db.url, ENV);
    const onB = resumeOn(b, id, cursors[1]!); // after WORKING: every step
    expect(await onB.end).toBeUndefined();
    expect(stepsOf(onB.events)).toEqual(ALL_STEPS);
    expect(lastState(onB.events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
