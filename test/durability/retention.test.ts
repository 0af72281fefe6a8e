import * as grpc from "@grpc/grpc-js";
import Database from "better-sqlite3";
import { join } from "node:path";
import { ErrorInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import { TaskState, type A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { STORE_FILE_NAME } from "../../src/app.js";
import { loadConfig } from "../../src/config/index.js";
import { RetentionSweeper } from "../../src/lifecycle/writes/retention.js";
import { STATUS_DETAILS_KEY } from "../../src/protocol/grpc-status.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { captureLogger } from "../foundation/helpers.js";
import { startA2AServer } from "../support/a2a-server.js";
import durableAgent from "./fixtures/durable-agent.js";
import { RESUMABLE_AGENT, fetchTask, getTask, killAll, listAllTasks, send, startService, taskOf, tempDataDir } from "./service-process.js";

/**
 * Issue 5 §5, retention: terminal tasks older than A2A_RETENTION are removed with their
 * history; GetTask on them is TASK_NOT_FOUND (R-TASK-4); tasks still running or waiting for
 * input stay whatever their age. Off by default.
 */
let data: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  data.remove();
});

async function expectTaskNotFound(client: A2AServiceClient, id: string): Promise<void> {
  const { error } = await getTask(client, id);
  expect(error?.code).toBe(grpc.status.NOT_FOUND);
  const status = Status.decode(error!.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer);
  expect(ErrorInfo.decode(status.details[0]!.value)).toMatchObject({ reason: "TASK_NOT_FOUND", metadata: { task_id: id } });
}

test("ISSUE5-RETENTION: off by default; the smallest age the setting accepts is 1ms", () => {
  expect(loadConfig({ argv: [], env: {} }).retentionMs).toBeNull();
  expect(loadConfig({ argv: [], env: { A2A_RETENTION: "1ms" } }).retentionMs).toBe(1);
  expect(loadConfig({ argv: [], env: { A2A_RETENTION: "1h30m" } }).retentionMs).toBe(5_400_000);
});

test("ISSUE5-RETENTION / R-TASK-4: a sweep on the SQLite store removes terminal tasks older than the age, with their history; GetTask on them is TASK_NOT_FOUND; younger, interrupted and running tasks stay", async () => {
  const file = join(data.dir, STORE_FILE_NAME);
  const repository = openSqliteTaskRepository({ file });
  const s = await startA2AServer({ agent: durableAgent, repository });
  try {
    const completed = [taskOf(await send(s.client, "done")), taskOf(await send(s.client, "slow 1"))];
    const waiting = taskOf(await send(s.client, "ask"));
    const running = taskOf(await send(s.client, "hang", { returnImmediately: true }));
    expect(completed.map((t) => t.status!.state)).toEqual([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_COMPLETED]);
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const { logger, lines } = captureLogger("info");
    const maxAgeMs = 60_000;
    // At the real time nothing is a minute old yet: nothing goes.
    expect(await new RetentionSweeper(repository, maxAgeMs, logger).sweep()).toBe(0);
    // An hour later, by an injected clock: the two completed tasks are too old.
    const later = new RetentionSweeper(repository, maxAgeMs, logger, () => Date.now() + 3_600_000);
    expect(await later.sweep()).toBe(2);
    expect(lines).toContainEqual(expect.objectContaining({ msg: "retention removed terminal tasks", removed: 2, max_age_ms: maxAgeMs }));

    for (const task of completed) await expectTaskNotFound(s.client, task.id);
    expect(await fetchTask(s.client, waiting.id)).toEqual(waiting);
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain((await fetchTask(s.client, running.id)).status!.state);
    const { tasks, totalSizes } = await listAllTasks(s.client);
    expect(tasks.map((t) => t.id).sort()).toEqual([waiting.id, running.id].sort());
    expect(totalSizes).toEqual([2]);

    // "and their history": no message of a removed task is left behind in the file.
    const reader = new Database(file, { readonly: true });
    try {
      expect(reader.prepare("SELECT count(*) FROM history WHERE task_pk NOT IN (SELECT pk FROM tasks)").pluck().get()).toBe(0);
      const ids = reader.prepare("SELECT id FROM tasks ORDER BY id").pluck().all();
      expect(ids).toEqual([waiting.id, running.id].sort());
    } finally {
      reader.close();
    }
  } finally {
    await s.close();
  }
});

test("ISSUE5-RETENTION: the service started with A2A_RETENTION sweeps at start-up: old terminal tasks go, the INPUT_REQUIRED task and the resumed WORKING task stay", async () => {
  const first = await startService(data.dir, { A2A_AGENT_MODULE: RESUMABLE_AGENT });
  const completed = [taskOf(await send(first.client, "done")), taskOf(await send(first.client, "done"))];
  const waiting = taskOf(await send(first.client, "ask"));
  const running = taskOf(await send(first.client, "hang forever", { returnImmediately: true }));
  await first.line(new RegExp(`agent: hang ${running.id} working`), "stderr");
  await first.kill();

  const second = await startService(data.dir, { A2A_AGENT_MODULE: RESUMABLE_AGENT, A2A_RETENTION: "1ms" });
  await second.line(new RegExp(`agent: resumed ${running.id} working`), "stderr");
  const swept = JSON.parse(await second.line(/retention removed terminal tasks/)) as Record<string, unknown>;
  expect(swept).toMatchObject({ removed: 2, max_age_ms: 1 });
  for (const task of completed) await expectTaskNotFound(second.client, task.id);
  expect(await fetchTask(second.client, waiting.id)).toEqual(waiting);
  expect((await fetchTask(second.client, running.id)).status!.state).toBe(TaskState.TASK_STATE_WORKING);
  const { tasks } = await listAllTasks(second.client);
  expect(tasks.map((t) => t.id).sort()).toEqual([waiting.id, running.id].sort());
});
