import { join } from "node:path";
import { STORE_FILE_NAME } from "../../src/app.js";
import { openSqliteTaskRepository } from "../../src/storage/sqlite/sqlite-task-repository.js";
import { a2aMetadata, killAll, sendRequest, startService, subscribe, tempDataDir } from "./service-process.js";

/**
 * Issue 15 item 5, the commit window seen from outside: a per-turn agent's chunks are gathered
 * over several turns into one commit, and still none reaches a stream before it is committed.
 * A client that received a chunk finds it in the database after the server was SIGKILLed (the
 * store opened again on it, as a restart opens it).
 */
let data: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  data.remove();
});

const textOf = (events: ReturnType<typeof subscribe>["events"]) =>
  events
    .flatMap((e) => (e.payload?.$case === "artifactUpdate" ? e.payload.value.artifact!.parts : []))
    .map((p) => (p.content?.$case === "text" ? p.content.value : "?"))
    .join("");

test("issue 15 item 5, R-STREAM-5: with a 20ms commit window, every chunk a stream received before a SIGKILL is in the database afterwards", async () => {
  const env = { A2A_STORE_COMMIT_WINDOW: "20ms" };
  const service = await startService(data.dir, env);
  const stream = subscribe(service.client, "", { call: service.client.sendStreamingMessage(sendRequest("stream 100000"), a2aMetadata()) });
  await stream.received(1);
  const taskId = stream.events[0]?.payload?.$case === "task" ? stream.events[0].payload.value.id : "";
  expect(taskId).not.toBe("");
  await stream.received(400);
  await service.kill();
  const delivered = textOf(stream.events);
  expect(delivered).toMatch(/^#0 #1 #2 /);
  expect(stream.events.length).toBeGreaterThan(100);

  const store = openSqliteTaskRepository({ file: join(data.dir, STORE_FILE_NAME) });
  try {
    const stored = await store.get({ tenant: "", principal: "anonymous" }, taskId);
    const storedText = stored!.task.artifacts[0]!.parts.map((p) => (p.content.case === "text" ? p.content.value : "?")).join("");
    expect(storedText.startsWith(delivered)).toBe(true);
  } finally {
    await store.close();
  }
});
