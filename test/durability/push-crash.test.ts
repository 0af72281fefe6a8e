/**
 * pending deliveries survive a crash. The real service (child process, SQLite) is
 * SIGKILLed while a receiver on loopback is down, so every delivery is still pending; a new
 * process on the same data directory delivers all of them, in order per task, once it is up.
 */
import { startReceiver, kindOf, type Receiver } from "../push/receiver.js";
import { unary } from "../foundation/helpers.js";
import { a2aMetadata, killAll, send, sendRequest, startService, taskOf, tempDataDir } from "./service-process.js";

const PUSH_ENV = {
  A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
  A2A_PUSH_ALLOW_HTTP: "true",
  A2A_PUSH_BACKOFF_MS: "50",
  A2A_PUSH_MAX_BACKOFF_MS: "200",
  A2A_PUSH_MAX_ATTEMPTS: "1000",
};

let data: ReturnType<typeof tempDataDir>;
let receiver: Receiver;
beforeEach(() => {
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  await receiver?.close();
  data.remove();
});

test("A-29: SIGKILL with deliveries pending, restart: every event is delivered, in order per task, none lost", async () => {
  let up = false;
  receiver = await startReceiver({ answer: () => ({ status: up ? 200 : 503 }) });
  const first = await startService(data.dir, PUSH_ENV);
  const tasks = [];
  for (let i = 0; i < 4; i++) {
    const request = sendRequest("done");
    const inline = { tenant: "", id: "", taskId: "", url: receiver.url(`/t${i}`), token: "", authentication: undefined };
    const result = await unary(
      first.client,
      first.client.sendMessage,
      { ...request, configuration: { ...request.configuration, taskPushNotificationConfig: inline } },
      a2aMetadata(),
    );
    tasks.push(taskOf(result));
  }
  await receiver.waitFor(4); // every lane tried its first event at least once: all are pending
  await first.kill();

  up = true;
  const attemptsBefore = receiver.requests.length;
  const second = await startService(data.dir, PUSH_ENV);
  // 4 tasks × (snapshot, WORKING, 2 artifact chunks, COMPLETED)
  const delivered = (all: typeof receiver.requests) => new Set(all.slice(attemptsBefore).map((r) => r.headers["webhook-id"])).size;
  await receiver.waitFor(20, 20_000, delivered);
  for (let i = 0; i < tasks.length; i++) {
    const seen = new Set<string>();
    const firsts = receiver.requests
      .slice(attemptsBefore)
      .filter((r) => r.path === `/t${i}` && !seen.has(r.headers["webhook-id"] as string) && seen.add(r.headers["webhook-id"] as string));
    expect(firsts.map(kindOf)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
    expect((firsts[0]!.json.task as { id: string }).id).toBe(tasks[i]!.id);
  }
  // Still running and answering after the drain.
  expect(taskOf(await send(second.client, "done")).status?.state).toBeDefined();
}, 60_000);
