import { toBinary } from "@bufbuild/protobuf";
import { join } from "node:path";
import { TaskSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { Task, TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { STORE_FILE_NAME } from "../../src/app.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { fetchTask, killAll, send, spawnService, startService, taskOf, tempDataDir } from "./service-process.js";

/**
 * Issue 5 §3, "acknowledged only after it is committed", seen from outside the server: while
 * the service runs, another process (this test, on its own SQLite connection) reads the task
 * the moment the client got its acknowledgement.
 */
let data: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  data.remove();
});

/** Callers without authentication are stored under this scope (src/protocol/a2a-handlers.ts). */
const ANONYMOUS = { tenant: "", principal: "anonymous" };

test("ISSUE5-ACK-COMMITTED: a task acknowledged by return_immediately is already visible to a new connection from another process while the server runs (WAL)", async () => {
  const service = await startService(data.dir);
  const acked = taskOf(await send(service.client, "hang", { returnImmediately: true }));
  const reader = openSqliteTaskRepository({ file: join(data.dir, STORE_FILE_NAME), exclusive: false });
  try {
    const seen = await reader.get(ANONYMOUS, acked.id);
    expect(seen).toBeDefined();
    // Decoded with the independent codec: the acknowledged part is there as the client was given it.
    const stored = Task.decode(toBinary(TaskSchema, seen!.task));
    expect({ id: stored.id, contextId: stored.contextId }).toEqual({ id: acked.id, contextId: acked.contextId });
    expect(stored.history.slice(0, acked.history.length)).toEqual(acked.history);

    // Once the agent's WORKING update is acknowledged (it prints after the write returns), the reader sees exactly what GetTask answers.
    await service.line(new RegExp(`agent: hang ${acked.id} working`), "stderr");
    const live = await fetchTask(service.client, acked.id);
    expect(live.status!.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(Task.decode(toBinary(TaskSchema, (await reader.get(ANONYMOUS, acked.id))!.task))).toEqual(live);
  } finally {
    await reader.close();
  }
});

test("ISSUE5-DATA-DIR-IN-USE: a second service started on a data directory in use refuses to start, naming the file, and does not settle the running tasks of the first", async () => {
  const first = await startService(data.dir);
  const acked = taskOf(await send(first.client, "hang", { returnImmediately: true }));
  await first.line(new RegExp(`agent: hang ${acked.id} working`), "stderr");

  const second = spawnService(data.dir);
  // Either outcome ends the wait: it refuses and exits, or it is up (its restart rule has run).
  await Promise.race([second.exited, second.line(/"msg":"listening on /).catch(() => undefined)]);
  if (second.proc.exitCode === null) second.proc.kill("SIGKILL");
  // It refuses, naming the file and saying why (one process per data directory).
  expect(await second.exited).toBe(1);
  expect(second.stdout.some((l) => /could not start: .*tasks\.sqlite.*in use by another server process/.test(l))).toBe(true);

  // The first process is still running the task: it must not have been failed "by a restart".
  const now = await fetchTask(first.client, acked.id);
  expect(now.status!.state).toBe(TaskState.TASK_STATE_WORKING);
});
