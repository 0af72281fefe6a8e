import { TaskState, type Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { fetchTask, killAll, send, subscribe, taskOf } from "../durability/service-process.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { eventually, startReplicas, type Replica } from "./replica-cluster.js";

/**
 * Ownership and failure: a run belongs to one replica through a lease it renews; when the
 * replica dies (SIGKILL), another applies the restart rule to its tasks once the lease ran out.
 */
const LEASE_MS = 1000;
let db: TestDatabase;

beforeEach(async () => {
  db = await createTestDatabase("failover");
});
afterEach(async () => {
  await killAll();
  await db.drop();
});

async function hangingTaskOn(replica: Replica): Promise<Task> {
  const task = taskOf(await send(replica.client, "hang", { returnImmediately: true }));
  await replica.line(new RegExp(`agent: hang ${task.id} on ${replica.name}`), "stderr");
  return task;
}

function settled(replica: Replica, id: string) {
  return eventually(
    async () => {
      const task = await fetchTask(replica.client, id);
      const state = task.status?.state;
      return state === TaskState.TASK_STATE_SUBMITTED || state === TaskState.TASK_STATE_WORKING ? undefined : task;
    },
    LEASE_MS * 6,
    `task ${id} to be settled`,
  );
}

describe("replica failure (lease A2A_LEASE_MS=1000)", () => {
  it("restart rule: SIGKILL the replica running a task; another fails it once the lease ran out; B's subscriber gets the FAILED event", async () => {
    const [a, b] = await startReplicas(["A", "B", "C"], db.url, { A2A_LEASE_MS: String(LEASE_MS) });
    const tasks = [await hangingTaskOn(a!), await hangingTaskOn(a!)];
    const watching = subscribe(b!.client, tasks[0]!.id);
    await watching.received(1);
    const killedAt = Date.now();
    await a!.kill();
    for (const task of tasks) {
      const failed = await settled(b!, task.id);
      expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(failed.status?.message?.parts[0]?.content).toEqual({ $case: "text", value: expect.stringMatching(/restarted while this task was running/) });
    }
    // Not before the lease ran out (the replica might only have been slow).
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS - 200);
    expect(await watching.end).toBeUndefined();
    const last = watching.events[watching.events.length - 1]!.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  it("restart rule with resume: exactly one surviving replica resumes the dead replica's task and completes it", async () => {
    const [a, b, c] = await startReplicas(["A", "B", "C"], db.url, { A2A_LEASE_MS: String(LEASE_MS), REPLICA_AGENT_RESUME: "1" });
    const task = await hangingTaskOn(a!);
    await a!.kill();
    const done = await settled(b!, task.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const resumedOn = done.artifacts[0]?.parts[0]?.content;
    expect(resumedOn).toEqual({ $case: "text", value: expect.stringMatching(/^resumed on [BC]$/) });
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS)); // time for a second takeover, if there were one
    const resumes = [...b!.stderr, ...c!.stderr].filter((line) => line.includes(`agent: resumed ${task.id}`));
    expect(resumes).toHaveLength(1);
    expect(
      (await fetchTask(c!.client, task.id)).history.filter((m) => m.parts[0]?.content?.$case === "text" && /^resumed on/.test(m.parts[0].content.value)),
    ).toHaveLength(1);
  });

  it("two replicas never run one task: a live replica keeps its running tasks through many lease periods", async () => {
    const [a, b, c] = await startReplicas(["A", "B", "C"], db.url, { A2A_LEASE_MS: String(LEASE_MS), REPLICA_AGENT_RESUME: "1" });
    const task = await hangingTaskOn(a!);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 4));
    expect((await fetchTask(b!.client, task.id)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect([...b!.stderr, ...c!.stderr].filter((line) => line.includes(task.id))).toEqual([]);
    expect(a!.stderr.filter((line) => line.includes(`stopped ${task.id}`))).toEqual([]);
  });

  it("SIGTERM with a resuming agent: the leaving replica's tasks are taken over without waiting for the lease", async () => {
    const [a, b] = await startReplicas(["A", "B"], db.url, { A2A_LEASE_MS: "20000", REPLICA_AGENT_RESUME: "1", A2A_SHUTDOWN_GRACE_MS: "200" });
    const task = await hangingTaskOn(a!);
    const stoppedAt = Date.now();
    a!.proc.kill("SIGTERM");
    await a!.exited;
    // The orphan sweep runs every 2 s (at most): the lease expired at shutdown is found by the first one.
    const done = await eventually(
      async () => {
        const t = await fetchTask(b!.client, task.id);
        return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
      },
      10_000,
      "the resumed task",
    );
    expect(done.artifacts[0]?.parts[0]?.content).toEqual({ $case: "text", value: "resumed on B" });
    expect(Date.now() - stoppedAt).toBeLessThan(10_000); // half the lease
  }, 30_000);
});
