import type * as grpc from "@grpc/grpc-js";
import { TaskState, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { fetchTask, killAll, send, subscribe } from "../durability/service-process.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { startReplica, startReplicas, type Replica } from "./replica-cluster.js";

/**
 * Chaos: three replicas under load, one SIGKILLed every few seconds and started again. Every
 * acknowledged task must be there afterwards and settled within the lease; every subscriber on
 * a replica that survived its stream must end with its task's terminal event or a clear status.
 * Bounded: ~24 s of load, then the tasks left behind get one lease and a sweep to settle.
 */
const LEASE_MS = 1000;
const LOAD_MS = 24_000;
const KILL_EVERY_MS = 3000;
const CLIENTS = 6;

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase("chaos");
});
afterAll(async () => {
  await killAll();
  await db.drop();
});

interface Watch {
  readonly taskId: string;
  readonly replica: Replica;
  readonly events: StreamResponse[];
  readonly end: Promise<grpc.ServiceError | undefined>;
}

const random = (n: number) => Math.floor(Math.random() * n);
const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

function lastState(events: readonly StreamResponse[]): TaskState | undefined {
  const last = events[events.length - 1]?.payload;
  if (last?.$case === "statusUpdate") return last.value.status?.state;
  if (last?.$case === "task") return last.value.status?.state;
  return undefined;
}

function steps(events: readonly StreamResponse[]): number[] {
  const seen: number[] = [];
  for (const event of events) {
    const p = event.payload;
    const parts = p?.$case === "task" ? p.value.artifacts.flatMap((x) => x.parts) : p?.$case === "artifactUpdate" ? (p.value.artifact?.parts ?? []) : [];
    for (const part of parts) if (part.content?.$case === "text") seen.push(Number(/^step (\d+)/.exec(part.content.value)?.[1]));
  }
  return seen;
}

describe("chaos: 3 replicas, one SIGKILLed every few seconds", () => {
  it("zero acknowledged tasks lost, none left SUBMITTED/WORKING beyond the lease, every surviving subscriber gets the terminal event or a clear status", async () => {
    const env = { A2A_LEASE_MS: String(LEASE_MS), A2A_LOG_LEVEL: "warn" };
    const live: Replica[] = await startReplicas(["A", "B", "C"], db.url, { ...env, A2A_LOG_LEVEL: "info" });
    const killed = new Set<Replica>();
    const acknowledged = new Set<string>();
    const watches: Watch[] = [];
    let kills = 0;
    let refusedCalls = 0;
    const loadEnds = Date.now() + LOAD_MS;

    const client = async () => {
      while (Date.now() < loadEnds) {
        const replica = live[random(live.length)];
        if (replica === undefined) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        const returnImmediately = Math.random() < 0.5;
        const result = await send(replica.client, `steps ${1 + random(4)} ${50 + random(250)}`, { returnImmediately, deadlineMs: 15_000 });
        const payload = result.response?.payload;
        if (payload?.$case !== "task") {
          refusedCalls++; // the replica died under the call: not acknowledged, the client would retry
          continue;
        }
        acknowledged.add(payload.value.id);
        if (returnImmediately) {
          const on = live[random(live.length)];
          if (on !== undefined) {
            const sub = subscribe(on.client, payload.value.id);
            watches.push({ taskId: payload.value.id, replica: on, events: sub.events, end: sub.end });
          }
        }
      }
    };

    const restarts: Array<Promise<void>> = [];
    const chaos = async () => {
      while (Date.now() < loadEnds - KILL_EVERY_MS) {
        await new Promise((resolve) => setTimeout(resolve, KILL_EVERY_MS));
        if (live.length < 2) continue; // one replica always answers
        const victim = live.splice(random(live.length), 1)[0]!;
        killed.add(victim);
        await victim.kill();
        kills++;
        // Started again in the background (a start takes seconds on a loaded machine).
        restarts.push(startReplica(victim.name, db.url, { ...env, A2A_LOG_LEVEL: "info" }).then((replica) => void live.push(replica)));
      }
    };

    await Promise.all([chaos(), ...Array.from({ length: CLIENTS }, client)]);
    await Promise.all(restarts);
    const loadEnded = Date.now();
    expect(kills).toBeGreaterThanOrEqual(3); // each kill waits for two replicas to be up, and a start takes seconds here
    expect(acknowledged.size).toBeGreaterThan(20);

    // Settled within the lease (plus the 0.5 s sweep and the shared machine's slack).
    const reader = live[0]!;
    const pending = new Set(acknowledged);
    while (pending.size > 0 && Date.now() - loadEnded < LEASE_MS + 8000) {
      for (const id of [...pending]) {
        const task = await fetchTask(reader.client, id); // throws if an acknowledged task is lost
        if (TERMINAL.has(task.status!.state)) pending.delete(id);
      }
      if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...pending]).toEqual([]);

    // Subscribers on replicas that were never killed while they watched.
    const survivors = watches.filter((w) => !killed.has(w.replica));
    expect(survivors.length).toBeGreaterThan(0);
    for (const watch of survivors) {
      let timer: NodeJS.Timeout | undefined;
      const error = await Promise.race([watch.end, new Promise<"open">((resolve) => (timer = setTimeout(() => resolve("open"), 5000)))]);
      clearTimeout(timer);
      if (error === "open") throw new Error(`the stream of task ${watch.taskId} on ${watch.replica.name} is still open 5 s after every task settled`);
      if (error === undefined) {
        expect(TERMINAL.has(lastState(watch.events)!)).toBe(true);
        const seen = steps(watch.events);
        expect(seen).toEqual([...seen].sort((x, y) => x - y)); // in order
        expect(new Set(seen).size).toBe(seen.length); // no duplicate
      } else {
        expect(error.code).toBeGreaterThan(0); // a status the client can act on (resubscribe, GetTask)
        expect(error.details.length).toBeGreaterThan(0);
      }
    }
    process.stderr.write(
      `chaos: ${kills} kills, ${acknowledged.size} acknowledged tasks, ${refusedCalls} calls lost with their replica, ${survivors.length} surviving subscribers\n`,
    );
  }, 90_000);
});
