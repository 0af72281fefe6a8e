/**
 * The four push config RPCs through the real gRPC server (R-PUSH-1..6, A-7, A-8, A-28, A-31):
 * CRUD, paging, ownership, limits, and bad input field by field. Webhook URLs here never
 * resolve (an injected resolver): nothing is sent anywhere.
 */
import * as grpc from "@grpc/grpc-js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { TaskState, dispatchAgent, expectA2AError, expectBadField, sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { loopbackResolver, pushConfig, pushRpc } from "./push-helpers.js";

const agents = dispatchAgent();
const WAIT = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?");
});
const DONE = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.complete();
});

let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent, env: { A2A_PUSH_MAX_CONFIGS_PER_TASK: "3" }, pushResolver: loopbackResolver() });
});
afterAll(() => s.close());

const LONG = "x".repeat(257);
const auth = { scheme: "Bearer", credentials: "s3cret" };

describe("R-PUSH CRUD", () => {
  test("R-CAP-1: the card declares push notifications when push is on (the default)", () => {
    expect(s.app.card.capabilities?.pushNotifications).toBe(true);
  });

  test("R-PUSH-2 / A-8: Create assigns an id when empty and returns the config as stored; Get returns it to its owner (R-PUSH-3)", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    const { response, error } = await pushRpc(s).create({ taskId: task.id, url: "https://hooks.example/a", token: "tok", authentication: auth });
    expect(error).toBeUndefined();
    expect(response!.id).not.toBe("");
    expect(response).toMatchObject({ taskId: task.id, url: "https://hooks.example/a", token: "tok", authentication: auth });
    const got = await pushRpc(s).get({ taskId: task.id, id: response!.id });
    expect(got.response).toEqual(response);
  });

  test("A-8: a client id is kept, and Create with an existing id replaces that config", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    await pushRpc(s).create({ taskId: task.id, id: "mine", url: "https://hooks.example/old" });
    const { response } = await pushRpc(s).create({ taskId: task.id, id: "mine", url: "https://hooks.example/new" });
    expect(response).toMatchObject({ id: "mine", url: "https://hooks.example/new" });
    const list = await pushRpc(s).list({ taskId: task.id });
    expect(list.response!.configs.map((c) => [c.id, c.url])).toEqual([["mine", "https://hooks.example/new"]]);
  });

  test("R-PUSH-4: List returns every config, paged by page_size with next_page_token (empty when done)", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    for (const id of ["c", "a", "b"]) await pushRpc(s).create({ taskId: task.id, id });
    const first = await pushRpc(s).list({ taskId: task.id, pageSize: 2 });
    expect(first.response!.configs.map((c) => c.id)).toEqual(["a", "b"]);
    expect(first.response!.nextPageToken).not.toBe("");
    const second = await pushRpc(s).list({ taskId: task.id, pageSize: 2, pageToken: first.response!.nextPageToken });
    expect(second.response!.configs.map((c) => c.id)).toEqual(["c"]);
    expect(second.response!.nextPageToken).toBe("");
    const all = await pushRpc(s).list({ taskId: task.id });
    expect(all.response!.configs.map((c) => c.id)).toEqual(["a", "b", "c"]);
  });

  test("R-PUSH-4: a page token of another task (or forged) is INVALID_ARGUMENT on page_token", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    const other = await sendForTask(s, userMessage(WAIT));
    for (const id of ["a", "b"]) await pushRpc(s).create({ taskId: task.id, id });
    const token = (await pushRpc(s).list({ taskId: task.id, pageSize: 1 })).response!.nextPageToken;
    expectBadField((await pushRpc(s).list({ taskId: other.id, pageToken: token })).error, "page_token");
    expectBadField((await pushRpc(s).list({ taskId: task.id, pageToken: "forged.token" })).error, "page_token");
  });

  test("R-PUSH-5 / A-7: Delete is idempotent (Empty twice); a deleted config is TASK_NOT_FOUND naming it", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    const { response } = await pushRpc(s).create({ taskId: task.id });
    expect((await pushRpc(s).delete({ taskId: task.id, id: response!.id })).error).toBeUndefined();
    expect((await pushRpc(s).delete({ taskId: task.id, id: response!.id })).error).toBeUndefined();
    expect((await pushRpc(s).delete({ taskId: task.id, id: "never-was" })).error).toBeUndefined();
    const { error } = await pushRpc(s).get({ taskId: task.id, id: response!.id });
    expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    expect(error!.details).toContain(response!.id);
    expect((await pushRpc(s).list({ taskId: task.id })).response!.configs).toEqual([]);
  });

  test("A-7: every push config RPC on a missing task is TASK_NOT_FOUND", async () => {
    const r = pushRpc(s);
    for (const { error } of [
      await r.create({ taskId: "no-such-task" }),
      await r.get({ taskId: "no-such-task", id: "x" }),
      await r.list({ taskId: "no-such-task" }),
      await r.delete({ taskId: "no-such-task", id: "x" }),
    ]) {
      expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    }
  });

  test("R-PUSH-6 / A-31: another owner's task is TASK_NOT_FOUND on all four, and its configs stay untouched", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    const mine = (await pushRpc(s).create({ taskId: task.id, token: "private" })).response!;
    const r = pushRpc(s);
    for (const { error } of [
      await r.create({ taskId: task.id, tenant: "someone-else" }),
      await r.get({ taskId: task.id, id: mine.id, tenant: "someone-else" }),
      await r.list({ taskId: task.id, tenant: "someone-else" }),
      await r.delete({ taskId: task.id, id: mine.id, tenant: "someone-else" }),
    ]) {
      expectA2AError(error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
    }
    expect((await r.get({ taskId: task.id, id: mine.id })).response?.token).toBe("private");
  });

  test("R-PUSH-2: configs are accepted on a terminal task", async () => {
    const task = await sendForTask(s, userMessage(DONE));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const { response, error } = await pushRpc(s).create({ taskId: task.id });
    expect(error).toBeUndefined();
    expect((await pushRpc(s).list({ taskId: task.id })).response!.configs.map((c) => c.id)).toEqual([response!.id]);
  });

  test("A-8: a task keeps at most A2A_PUSH_MAX_CONFIGS_PER_TASK configs; more is INVALID_ARGUMENT on task_id, replacing one is fine", async () => {
    const task = await sendForTask(s, userMessage(WAIT));
    for (const id of ["1", "2", "3"]) expect((await pushRpc(s).create({ taskId: task.id, id })).error).toBeUndefined();
    expectBadField((await pushRpc(s).create({ taskId: task.id, id: "4" })).error, "task_id");
    expect((await pushRpc(s).create({ taskId: task.id, id: "2", url: "https://hooks.example/two" })).error).toBeUndefined();
  });

  test("R-SEND-7: an inline config is stored for the task the call creates, as if made by Create", async () => {
    const task = await sendForTask(s, userMessage(WAIT), {
      taskPushNotificationConfig: pushConfig({ id: "inline", url: "https://hooks.example/inline", token: "t" }),
    });
    const got = await pushRpc(s).get({ taskId: task.id, id: "inline" });
    expect(got.response).toMatchObject({ id: "inline", taskId: task.id, url: "https://hooks.example/inline", token: "t" });
  });
});

describe("R-PUSH bad input, field by field (INVALID_ARGUMENT naming the field)", () => {
  let strict: A2ATestServer;
  let taskId: string;
  beforeAll(async () => {
    strict = await startA2AServer({ agent: agents.agent, pushResolver: loopbackResolver() }); // defaults: https only, no allowlist
    taskId = (await sendForTask(strict, userMessage(WAIT))).id;
  });
  afterAll(() => strict.close());

  const creates: Array<[string, Record<string, unknown>, string]> = [
    ["task_id empty", { taskId: "" }, "task_id"],
    ["task_id oversized", { taskId: LONG }, "task_id"],
    ["url empty", { url: "" }, "url"],
    ["url relative", { url: "/hook" }, "url"],
    ["url ftp", { url: "ftp://hooks.example/x" }, "url"],
    ["url plain http (not allowed by default)", { url: "http://hooks.example/x" }, "url"],
    ["url with credentials", { url: "https://user:pw@hooks.example/x" }, "url"],
    ["url oversized (2049)", { url: `https://hooks.example/${"p".repeat(2030)}` }, "url"],
    ["url loopback 127.0.0.1", { url: "https://127.0.0.1/x" }, "url"],
    ["url loopback ::1", { url: "https://[::1]/x" }, "url"],
    ["url localhost", { url: "https://localhost/x" }, "url"],
    ["url private 10/8", { url: "https://10.1.2.3/x" }, "url"],
    ["url private 172.16/12", { url: "https://172.20.0.1/x" }, "url"],
    ["url private 192.168/16", { url: "https://192.168.1.1/x" }, "url"],
    ["url link-local metadata 169.254.169.254", { url: "https://169.254.169.254/latest/meta-data" }, "url"],
    ["url CGNAT 100.64/10", { url: "https://100.64.0.1/x" }, "url"],
    ["url multicast", { url: "https://224.0.0.1/x" }, "url"],
    ["url unspecified 0.0.0.0", { url: "https://0.0.0.0/x" }, "url"],
    ["url IPv4-mapped IPv6 of a private address", { url: "https://[::ffff:10.0.0.1]/x" }, "url"],
    ["url IPv6 link-local", { url: "https://[fe80::1]/x" }, "url"],
    ["url IPv6 unique-local", { url: "https://[fd00::1]/x" }, "url"],
    ["url decimal IPv4 spelling of loopback", { url: "https://2130706433/x" }, "url"],
    ["url hex IPv4 spelling of loopback", { url: "https://0x7f000001/x" }, "url"],
    ["url octal IPv4 spelling of loopback", { url: "https://0177.0.0.1/x" }, "url"],
    ["id oversized", { id: LONG }, "id"],
    ["id with a newline", { id: "a\nb" }, "id"],
    ["token with CR/LF (header injection)", { token: "t\r\nX-Evil: 1" }, "token"],
    ["token oversized (4097)", { token: "t".repeat(4097) }, "token"],
    ["authentication credentials oversized (4097)", { authentication: { scheme: "Bearer", credentials: "c".repeat(4097) } }, "authentication.credentials"],
    ["authentication scheme empty", { authentication: { scheme: "", credentials: "c" } }, "authentication.scheme"],
    ["authentication scheme with a space", { authentication: { scheme: "Bearer x", credentials: "c" } }, "authentication.scheme"],
    ["authentication credentials with CR/LF", { authentication: { scheme: "Bearer", credentials: "c\r\nX-Evil: 1" } }, "authentication.credentials"],
    ["tenant with a newline", { tenant: "a\nb" }, "tenant"],
  ];

  test.each(creates.map(([what, extra, field]) => [what, field, extra] as const))(
    "R-PUSH-2 / A-28 / A-9: Create with %s -> %s",
    async (_what, field, extra) => {
      const { error } = await pushRpc(strict).create({ taskId, ...extra });
      expectBadField(error, field);
    },
  );

  test.each(
    [
      ["task_id empty", { taskId: "", id: "x" }, "task_id"] as const,
      ["id empty", { taskId: "t", id: "" }, "id"] as const,
      ["id oversized", { taskId: "t", id: LONG }, "id"] as const,
    ].map(([what, req, field]) => [what, field, req] as const),
  )("R-PUSH-3 / R-PUSH-5: Get and Delete with %s -> %s", async (_what, field, req) => {
    expectBadField((await pushRpc(strict).get(req)).error, field);
    expectBadField((await pushRpc(strict).delete(req)).error, field);
  });

  test("R-PUSH-4: List with a negative page_size -> page_size; with an empty task_id -> task_id", async () => {
    expectBadField((await pushRpc(strict).list({ taskId, pageSize: -1 })).error, "page_size");
    expectBadField((await pushRpc(strict).list({ taskId: "" })).error, "task_id");
  });

  test("A-28: an inline config with a refused destination is INVALID_ARGUMENT on its url, and makes no task", async () => {
    const before = strict.app.service.runningCount;
    const { error } = await new Promise<{ error?: grpc.ServiceError }>((resolve) =>
      strict.client.sendMessage(
        {
          tenant: "",
          message: userMessage(WAIT),
          configuration: { acceptedOutputModes: [], returnImmediately: false, taskPushNotificationConfig: pushConfig({ url: "https://169.254.169.254/x" }) },
        },
        strict.metadata(),
        (e) => resolve({ error: e ?? undefined }),
      ),
    );
    expectBadField(error, "configuration.task_push_notification_config.url");
    expect(strict.app.service.runningCount).toBe(before);
  });

  test("the server still answers after the table, and no refused Create stored anything", async () => {
    expect((await pushRpc(strict).list({ taskId })).response!.configs).toEqual([]);
  });
});

describe("R-CAP-1: push off", () => {
  test("R-CAP-1 / R-PUSH-1: with A2A_PUSH_NOTIFICATIONS=false the card says so and all four answer PUSH_NOTIFICATION_NOT_SUPPORTED", async () => {
    const off = await startA2AServer({ agent: agents.agent, env: { A2A_PUSH_NOTIFICATIONS: "false" } });
    try {
      expect(off.app.card.capabilities?.pushNotifications).toBe(false);
      const task = await sendForTask(off, userMessage(WAIT));
      const r = pushRpc(off);
      for (const { error } of [
        await r.create({ taskId: task.id }),
        await r.get({ taskId: task.id, id: "x" }),
        await r.list({ taskId: task.id }),
        await r.delete({ taskId: task.id, id: "x" }),
      ]) {
        expectA2AError(error, grpc.status.FAILED_PRECONDITION, "PUSH_NOTIFICATION_NOT_SUPPORTED");
      }
    } finally {
      await off.close();
    }
  });
});
