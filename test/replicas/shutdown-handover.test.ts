import { TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { a2aMetadata, fetchTask, killAll, sendRequest, subscribe } from "../durability/service-process.js";
import { createTestDatabase, type TestDatabase } from "../support/postgres/database.js";
import { startReplicas } from "./replica-cluster.js";

/**
 * Issue 33 finding 15 with replicas on PostgreSQL. A replica that gets SIGTERM gives its runs the
 * grace; then an agent that cannot resume has its tasks FAILED by the leaving replica itself ("the
 * server shut down"): a takeover would only apply the restart rule and fail them too, later. An
 * agent that resumes hands its tasks over instead (failover.test.ts: "SIGTERM with a resuming
 * agent"): the leases are given up at once and another replica resumes them.
 */
let db: TestDatabase;
beforeEach(async () => {
  db = await createTestDatabase("shutdown_handover");
});
afterEach(async () => {
  await killAll();
  await db.drop();
});

test("ISSUE33-15: SIGTERM on a replica with an agent that cannot resume: its stream and a subscriber on another replica get FAILED 'the server shut down', without waiting for the lease", async () => {
  const [a, b] = await startReplicas(["A", "B"], db.url, { A2A_LEASE_MS: "20000", A2A_SHUTDOWN_GRACE_MS: "500" });
  const onA = subscribe(a!.client, "", { call: a!.client.sendStreamingMessage(sendRequest("hang"), a2aMetadata()) });
  await onA.received(2);
  const first = onA.events[0]!.payload;
  const taskId = first?.$case === "task" ? first.value.id : "";
  await a!.line(new RegExp(`agent: hang ${taskId} on A`), "stderr");
  const onB = subscribe(b!.client, taskId);
  await onB.received(1);
  const signalled = Date.now();
  a!.proc.kill("SIGTERM");

  for (const stream of [onA, onB]) {
    expect(await stream.end).toBeUndefined();
    const last = stream.events.at(-1)?.payload;
    const status = last?.$case === "statusUpdate" ? last.value.status : undefined;
    expect(status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(status?.message?.parts[0]?.content).toEqual({ $case: "text", value: expect.stringMatching(/the server shut down/) });
  }
  expect(Date.now() - signalled).toBeLessThan(10_000); // half the lease
  expect(await a!.exited).toBe(0);
  const after = await fetchTask(b!.client, taskId);
  expect(after.status?.state).toBe(TaskState.TASK_STATE_FAILED);
  expect(b!.stdout.some((l) => l.includes("settled tasks of a replica that stopped renewing its leases"))).toBe(false);
}, 30_000);
