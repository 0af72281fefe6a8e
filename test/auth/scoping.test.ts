/**
 * Who sees a task (A-31, R-SEC-2..4): with API keys for two principals, every RPC that names a
 * task is driven both ways, alice on bob's task and bob on alice's, and the other principal's
 * task is TASK_NOT_FOUND, exactly like an unknown id; the owner's own calls still work, and an
 * open stream of the owner is not disturbed.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { expectA2AError, gate, rpc, scriptedAgent, sendRequest, taskOf, textOf, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { withAuth } from "./auth-support.js";
import { streamSend, subscribe } from "./stream-support.js";
import { TaskState } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";

const keys = { alice: newApiKey(), bob: newApiKey() };
const as = (who: keyof typeof keys) => withAuth({ "x-api-key": keys[who] });
let dir: string;
let s: A2ATestServer;
const hold = new Map<string, { promise: Promise<void>; open: (v: void) => void }>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-keys-"));
  const file = join(dir, "keys");
  writeFileSync(
    file,
    `${apiKeyLine(keys.alice, { principal: "alice", tenants: undefined, scopes: [] })}\n${apiKeyLine(keys.bob, { principal: "bob", tenants: undefined, scopes: [] })}\n`,
  );
  // "ask": INPUT_REQUIRED (a task that takes follow-ups); "hold <n>": WORKING until the test opens gate n;
  // "refs": completes naming the reference tasks it was given.
  const agent = scriptedAgent(async (ctx) => {
    const text = ctx.message.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join("");
    await ctx.working();
    if (text.startsWith("hold")) {
      const g = gate<void>();
      hold.set(text, g);
      await Promise.race([g.promise, new Promise((r) => ctx.signal.addEventListener("abort", r))]);
      if (!ctx.signal.aborted) await ctx.complete("released");
      return;
    }
    if (text === "refs") return ctx.complete(`refs:${ctx.referenceTasks.map((t) => t.id).join(",")}`);
    await ctx.requireInput("more?");
  });
  s = await startA2AServer({ agent, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: file, A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true" } });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A task of `owner`, left INPUT_REQUIRED. */
async function taskOfOwner(owner: keyof typeof keys): Promise<string> {
  const { response, error } = await rpc(s).send(sendRequest(userMessage("ask"), { returnImmediately: false }), as(owner));
  expect(error).toBeUndefined();
  return taskOf(response!).id;
}

const pairs = [
  ["alice", "bob"],
  ["bob", "alice"],
] as const;

describe.each(pairs)("A-31: %s's task seen by %s", (owner, other) => {
  let id: string;
  beforeAll(async () => (id = await taskOfOwner(owner)));

  test("A-31 R-SEC-3: GetTask is TASK_NOT_FOUND for the other principal, found for the owner", async () => {
    expectA2AError((await rpc(s).get({ id }, as(other))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expect((await rpc(s).get({ id }, as(owner))).response?.id).toBe(id);
  });

  test("A-31 R-SEC-3: ListTasks lists only the caller's own tasks", async () => {
    const mine = (await rpc(s).list({}, as(owner))).response!.tasks.map((t) => t.id);
    const theirs = (await rpc(s).list({}, as(other))).response!.tasks.map((t) => t.id);
    expect(mine).toContain(id);
    expect(theirs).not.toContain(id);
  });

  test("A-31 R-SEC-4: a follow-up SendMessage on the other's task is TASK_NOT_FOUND, and the task is untouched", async () => {
    const { error } = await rpc(s).send(sendRequest(userMessage("ask", { taskId: id })), as(other));
    expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expect((await rpc(s).get({ id }, as(owner))).response!.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  test("A-31: a follow-up SendStreamingMessage on the other's task is TASK_NOT_FOUND", async () => {
    const { error, events } = await streamSend(s.client, sendRequest(userMessage("ask", { taskId: id })), as(other)).result;
    expect(events).toEqual([]);
    expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  });

  test("A-31 R-SEC-3: SubscribeToTask on the other's task is TASK_NOT_FOUND; the owner may subscribe", async () => {
    const theirs = await subscribe(s.client, id, as(other)).result;
    expect(theirs.events).toEqual([]);
    expectA2AError(theirs.error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    const mine = subscribe(s.client, id, as(owner));
    await new Promise<void>((resolve) => {
      const t = setInterval(() => mine.events.length > 0 && (clearInterval(t), resolve()), 5);
    });
    expect(mine.events[0]!.payload?.$case).toBe("task");
    mine.cancel();
  });

  test("A-31 R-SEC-3: CancelTask on the other's task is TASK_NOT_FOUND, and the task is not canceled", async () => {
    expectA2AError((await rpc(s).cancel({ id }, as(other))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expect((await rpc(s).get({ id }, as(owner))).response!.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  test("A-31: reference_task_ids naming the other's task give the agent nothing of it", async () => {
    const own = await taskOfOwner(other);
    const { response } = await rpc(s).send(sendRequest(userMessage("refs", { referenceTaskIds: [id, own] })), as(other));
    expect(textOf(taskOf(response!).status!.message)).toBe(`refs:${own}`);
  });

  test("A-31: a stream the owner has open is not disturbed by the other's calls, and delivers to the end", async () => {
    const word = `hold ${owner}`;
    const stream = streamSend(s.client, sendRequest(userMessage(word)), as(owner));
    await new Promise<void>((resolve) => {
      const t = setInterval(() => hold.has(word) && stream.events.length > 0 && (clearInterval(t), resolve()), 5);
    });
    const running = stream.events[0]!.payload!.$case === "task" ? (stream.events[0]!.payload as { value: { id: string } }).value.id : "";
    expectA2AError((await rpc(s).cancel({ id: running }, as(other))).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expectA2AError((await subscribe(s.client, running, as(other)).result).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    hold.get(word)!.open();
    const { error, events } = await stream.result;
    expect(error).toBeUndefined();
    const last = events.at(-1)!;
    expect(last.payload?.$case === "statusUpdate" && last.payload.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});

describe("A-31: push notification config RPCs", () => {
  type Unary<Req> = (r: Req, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, res?: unknown) => void) => unknown;
  const call = <Req>(method: Unary<Req>, req: Req, md: grpc.Metadata) =>
    new Promise<{ error: grpc.ServiceError | null; response: any }>((resolve) =>
      method.call(s.client, req, md, (error, response) => resolve({ error, response })),
    );
  const hook = "http://127.0.0.1:9/hook";

  test.each(pairs)("A-31: %s's push configs are TASK_NOT_FOUND to %s, on every push config RPC", async (owner, other) => {
    const id = await taskOfOwner(owner);
    const c = s.client;
    const created = await call(
      c.createTaskPushNotificationConfig,
      { tenant: "", taskId: id, id: "cfg", url: hook, token: "", authentication: undefined },
      as(owner),
    );
    expect(created.error).toBeNull();
    expect(created.response.id).toBe("cfg");
    const results = await Promise.all([
      call(c.createTaskPushNotificationConfig, { tenant: "", taskId: id, id: "cfg2", url: hook, token: "", authentication: undefined }, as(other)),
      call(c.getTaskPushNotificationConfig, { tenant: "", taskId: id, id: "cfg" }, as(other)),
      call(c.listTaskPushNotificationConfigs, { tenant: "", taskId: id, pageSize: 0, pageToken: "" }, as(other)),
      call(c.deleteTaskPushNotificationConfig, { tenant: "", taskId: id, id: "cfg" }, as(other)),
    ]);
    for (const { error } of results) expectA2AError(error ?? undefined, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    // The other principal's delete removed nothing: the owner still sees the one config.
    const listed = await call(c.listTaskPushNotificationConfigs, { tenant: "", taskId: id, pageSize: 0, pageToken: "" }, as(owner));
    expect(listed.error).toBeNull();
    expect(listed.response.configs.map((x: { id: string }) => x.id)).toEqual(["cfg"]);
  });
});
