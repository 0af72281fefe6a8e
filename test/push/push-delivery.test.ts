/**
 * Webhook delivery end to end (R-PUSHD, A-9, A-10, A-12, A-28, A-29): a real gRPC server, real
 * HTTP receivers on loopback only (127.0.0.1 and ::1, let through A2A_PUSH_ALLOW_HOSTS), and an
 * injected resolver that resolves nothing but `*.test` names to those receivers.
 */
import { createHmac } from "node:crypto";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import * as grpc from "@grpc/grpc-js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { TaskState, dispatchAgent, expectA2AError, gate, rpc, sendForTask, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { DELIVERY_CHANNEL, type DeliveryOutcome } from "../../src/push/index.js";
import { tenantSigningSecret } from "../../src/push/signature.js";
import { kindOf, startReceiver, stateOf, type Received, type Receiver } from "./receiver.js";
import { loopbackResolver, pushConfig, pushRpc } from "./push-helpers.js";
import { until } from "../foundation/helpers.js";

const agents = dispatchAgent();
/** Status and artifact updates, then completion: five events after the snapshot. */
const STEPS = agents.on(async (ctx) => {
  await ctx.working("starting");
  await ctx.artifact({ artifactId: "a1", parts: ["part one"] });
  await ctx.artifact({ artifactId: "a1", parts: ["part two"] }, { append: true, lastChunk: true });
  await ctx.complete("done");
});
/** Many status updates: ordering under retries. */
const MANY = agents.on(async (ctx) => {
  for (let i = 0; i < 12; i++) await ctx.working(`step ${i}`);
  await ctx.complete("done");
});
const WAIT = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?");
});
let release = gate();
const HELD = agents.on(async (ctx) => {
  await ctx.working("held");
  await release.promise;
  await ctx.complete("released");
});

const SECRET = Buffer.alloc(32, 9);
const BASE_ENV = {
  A2A_PUSH_ALLOW_HOSTS: "127.0.0.1,::1",
  A2A_PUSH_ALLOW_HTTP: "true",
  A2A_PUSH_BACKOFF_MS: "20",
  A2A_PUSH_MAX_BACKOFF_MS: "150",
  A2A_PUSH_MAX_ATTEMPTS: "1000",
  A2A_PUSH_SIGNING_SECRET: `whsec_${SECRET.toString("base64")}`,
};

let s: A2ATestServer;
const receivers: Receiver[] = [];
const receiver = async (options: Parameters<typeof startReceiver>[0] = {}) => {
  const r = await startReceiver(options);
  receivers.push(r);
  return r;
};
const resolver = loopbackResolver({ "receiver.test": "127.0.0.1", "rebind.test": "10.0.0.7", "metadata.test": "169.254.169.254" });

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent, env: BASE_ENV, pushResolver: resolver });
});
afterAll(async () => {
  await s.close();
  for (const r of receivers) await r.close();
});

const inline = (url: string, extra: Record<string, unknown> = {}) => ({ taskPushNotificationConfig: pushConfig({ url, ...extra }) });
/** Requests the receiver answered 2xx, first per webhook-id, in arrival order. */
const deliveredOnce = (r: Receiver, ok: (req: Received, n: number) => boolean) => {
  const seen = new Set<string>();
  return r.requests.filter((req, n) => ok(req, n) && !seen.has(req.headers["webhook-id"] as string) && seen.add(req.headers["webhook-id"] as string));
};

test("A-10 / R-SEND-7 / R-PUSHD-1: an inline config gets the task snapshot first, then every event in order, as ProtoJSON StreamResponses", async () => {
  const r = await receiver();
  const task = await sendForTask(
    s,
    userMessage(STEPS),
    inline(r.url("/inline"), { token: "tok-1", authentication: { scheme: "Bearer", credentials: "cred-1" } }),
  );
  expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const got = await r.waitFor(5);
  expect(got.map(kindOf)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
  expect(got.map(stateOf)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", undefined, undefined, "TASK_STATE_COMPLETED"]);
  const snapshot = got[0]!.json.task as { id: string; history: unknown[] };
  expect(snapshot.id).toBe(task.id);
  expect(snapshot.history.length).toBe(1);
  const append = got[3]!.json.artifactUpdate as { taskId: string; contextId: string; append: boolean; lastChunk: boolean };
  expect(append).toMatchObject({ taskId: task.id, contextId: task.contextId, append: true, lastChunk: true });
  const status = got[4]!.json.statusUpdate as { status: { timestamp: string } };
  expect(status.status.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  for (const req of got) {
    expect(req.path).toBe("/inline");
    expect(req.headers["content-type"]).toBe("application/a2a+json");
    expect(req.headers.authorization).toBe("Bearer cred-1");
    expect(req.headers["x-a2a-notification-token"]).toBe("tok-1");
  }
  expect(new Set(got.map((g) => g.headers["webhook-id"])).size).toBe(5);
});

test("A-29: Standard Webhooks headers verify with the default tenant's HMAC secret, derived from the operator's root secret (A2A_PUSH_SIGNING_SECRET selects HMAC)", async () => {
  const r = await receiver();
  await sendForTask(s, userMessage(STEPS), inline(r.url()));
  const got = await r.waitFor(5);
  for (const req of got) {
    const id = req.headers["webhook-id"] as string;
    const timestamp = req.headers["webhook-timestamp"] as string;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    const expected = createHmac("sha256", tenantSigningSecret(SECRET, "")).update(`${id}.${timestamp}.${req.body}`).digest("base64");
    expect((req.headers["webhook-signature"] as string).split(" ")).toContain(`v1,${expected}`);
  }
});

test("R-PUSH-2 / A-10: a config made by Create gets every later event of the task (no snapshot), over IPv6 loopback too", async () => {
  const r = await receiver({ host: "::1" });
  release = gate();
  const task = await sendForTask(s, userMessage(HELD), { returnImmediately: true });
  expect((await pushRpc(s).create({ taskId: task.id, url: r.url("/v6") })).error).toBeUndefined();
  release.open();
  const got = await r.waitFor(1);
  expect(got.map(kindOf)).toEqual(["statusUpdate"]);
  expect(stateOf(got[0]!)).toBe("TASK_STATE_COMPLETED");
});

test("A-29 / A-12: a receiver answering 500 for a while, then 200, gets every event at least once, in order, none lost", async () => {
  const until = Date.now() + 1500;
  const r = await receiver({ answer: () => ({ status: Date.now() < until ? 500 : 200 }) });
  const outcomes: DeliveryOutcome[] = [];
  const listen = (m: unknown) => outcomes.push(m as DeliveryOutcome);
  subscribe(DELIVERY_CHANNEL, listen);
  try {
    await sendForTask(s, userMessage(MANY), inline(r.url()));
    // Snapshot + 12 WORKING + COMPLETED = 14 events; wait until each got through once.
    await r.waitFor(14, 20_000, () => deliveredOnce(r, (req) => req.atMs >= until).length);
    const firsts = deliveredOnce(r, (req) => req.atMs >= until);
    expect(firsts.map(kindOf)).toEqual(["task", ...Array(13).fill("statusUpdate")]);
    const texts = firsts
      .slice(1, 13)
      .map((req) => (req.json.statusUpdate as { status: { message: { parts: Array<{ text: string }> } } }).status.message.parts[0]!.text);
    expect(texts).toEqual(Array.from({ length: 12 }, (_, i) => `step ${i}`));
    expect(stateOf(firsts[13]!)).toBe("TASK_STATE_COMPLETED");
    // Retries were made, published for metrics, and every attempt of one event carried its webhook-id.
    expect(r.requests.filter((req) => req.atMs < until).length).toBeGreaterThan(0);
    expect(outcomes.some((o) => o.outcome === "retrying")).toBe(true);
    expect(outcomes.filter((o) => o.outcome === "delivered").length).toBeGreaterThanOrEqual(14);
  } finally {
    unsubscribe(DELIVERY_CHANNEL, listen);
  }
});

test("A-12: a 429 with Retry-After is retried no sooner than it asks", async () => {
  const r = await receiver({ answer: (_req, n) => (n === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 204 }) });
  await sendForTask(s, userMessage(WAIT), inline(r.url()));
  const got = await r.waitFor(2);
  expect(got[1]!.headers["webhook-id"]).toBe(got[0]!.headers["webhook-id"]);
  expect(got[1]!.atMs - got[0]!.atMs).toBeGreaterThanOrEqual(950);
});

test("A-28 / A-29: a 302 is never followed (to loopback or anywhere): a failed attempt, retried, then given up and logged", async () => {
  const target = await receiver();
  const limited = await startA2AServer({ agent: agents.agent, env: { ...BASE_ENV, A2A_PUSH_MAX_ATTEMPTS: "3" }, pushResolver: resolver });
  try {
    const r = await receiver({ answer: () => ({ status: 302, headers: { location: target.url("/stolen") } }) });
    const task = await sendForTask(limited, userMessage(WAIT), inline(r.url()));
    await r.waitFor(9); // 3 events (snapshot, WORKING, INPUT_REQUIRED) × 3 attempts
    await limited.app.push!.service.whenIdle();
    expect(target.requests).toEqual([]);
    const gaveUp = limited.lines.filter((l) => l.msg === "push: gave up a delivery");
    expect(gaveUp.length).toBe(3);
    expect(gaveUp[0]).toMatchObject({ task_id: task.id, last_status: "HTTP 302" });
    expect(typeof gaveUp[0]!.config_id).toBe("string");
    expect(limited.app.push!.service.stats()).toMatchObject({ pending: 0, gaveUp: 3 });
  } finally {
    await limited.close();
  }
});

test("A-29: another 4xx gives that event up at once; the config's next events still go", async () => {
  const r = await receiver({ answer: (_req, n) => ({ status: n === 0 ? 400 : 200 }) });
  await sendForTask(s, userMessage(STEPS), inline(r.url()));
  const got = await r.waitFor(5);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(r.requests.length).toBe(5); // nothing retried
  expect(got.map(kindOf)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
});

test("A-29: 410 Gone removes the config: nothing more is sent to it, and Get says it is gone", async () => {
  const r = await receiver({ answer: () => ({ status: 410 }) });
  const task = await sendForTask(s, userMessage(STEPS), inline(r.url(), { id: "gone" }));
  await r.waitFor(1);
  await s.app.push!.service.whenIdle();
  expect(r.requests.length).toBe(1);
  expectA2AError((await pushRpc(s).get({ taskId: task.id, id: "gone" })).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
});

test("R-PUSHD-8 / R-PUSH-5: after Delete nothing is sent to that webhook", async () => {
  const r = await receiver();
  release = gate();
  const task = await sendForTask(s, userMessage(HELD), { ...inline(r.url(), { id: "d" }), returnImmediately: true });
  await r.waitFor(2); // snapshot, WORKING
  await pushRpc(s).delete({ taskId: task.id, id: "d" });
  release.open();
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(r.requests.map(kindOf)).toEqual(["task", "statusUpdate"]);
});

test("R-PUSHD-8 / A-29: a Delete while the lane holds later events in memory: none of them is sent after it", async () => {
  // The receiver holds the snapshot's request while the agent's 13 events commit and queue behind it.
  const r = await receiver({ answer: (_req, n) => ({ status: 200, delayMs: n === 0 ? 1500 : 0 }) });
  const task = await sendForTask(s, userMessage(MANY), { ...inline(r.url(), { id: "q" }), returnImmediately: true });
  await r.waitFor(1);
  await until(() => s.app.push!.service.stats().pending >= 10, "the events pending behind the first");
  await pushRpc(s).delete({ taskId: task.id, id: "q" });
  await s.app.push!.service.whenIdle();
  expect(r.requests.map(kindOf)).toEqual(["task"]);
});

test("A-28: the connection goes to the vetted address (a name only the injected resolver knows reaches the loopback receiver)", async () => {
  const r = await receiver();
  await sendForTask(s, userMessage(WAIT), inline(`http://receiver.test:${r.port}/named`));
  const got = await r.waitFor(3);
  expect(got.map((g) => g.path)).toEqual(["/named", "/named", "/named"]);
  expect(got[0]!.headers.host).toBe(`receiver.test:${r.port}`);
});

test("A-28: a name resolving to a private or metadata address is refused at connection, before any connection, and logged", async () => {
  const before = resolver.calls.length;
  for (const name of ["rebind.test", "metadata.test"]) {
    const task = await sendForTask(s, userMessage(WAIT), inline(`http://${name}/x`));
    await s.app.push!.service.whenIdle();
    const refused = s.lines.filter((l) => l.msg === "push: gave up a delivery" && l.task_id === task.id);
    expect(refused.length).toBe(3); // snapshot, WORKING, INPUT_REQUIRED: each refused at once
    expect(String(refused[0]!.last_status)).toMatch(/refused: .*resolves to/);
  }
  expect(resolver.calls.slice(before)).toEqual(expect.arrayContaining(["rebind.test", "metadata.test"]));
});

test("A-29: a receiver taking 5 s per request delays neither the agent nor another task's deliveries", async () => {
  const slow = await receiver({ answer: () => ({ status: 200, delayMs: 5000 }) });
  const fast = await receiver();
  const started = Date.now();
  const slowTask = await sendForTask(s, userMessage(STEPS), inline(slow.url()));
  expect(slowTask.status!.state).toBe(TaskState.TASK_STATE_COMPLETED); // the agent finished at its own pace
  await slow.waitFor(1);
  await sendForTask(s, userMessage(STEPS), inline(fast.url()));
  await fast.waitFor(5, 4000);
  // Every event of the second task arrived while the slow receiver still holds its first request.
  expect(slow.requests.length).toBe(1);
  expect(Date.now() - started).toBeLessThan(5000);
}, 20_000);

test("retention removes a task's configs and its pending deliveries with it", async () => {
  const r = await receiver({ answer: () => ({ status: 503 }) });
  const task = await sendForTask(s, userMessage(STEPS), inline(r.url(), { id: "kept" }));
  await r.waitFor(5);
  expect(s.app.push!.service.stats().pending).toBeGreaterThan(0);
  await s.app.repository.purgeTerminalBefore((Date.now() + 1000) * 1000);
  await s.app.push!.service.whenIdle();
  expect(s.app.push!.service.stats().pending).toBe(0);
  const seen = r.requests.length;
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(r.requests.length).toBeLessThanOrEqual(seen + 1); // at most an attempt already in flight
  expectA2AError((await pushRpc(s).get({ taskId: task.id, id: "kept" })).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
});

test("stats() reports pending deliveries and the oldest one's age (for metrics, #16)", async () => {
  const r = await receiver({ answer: () => ({ status: 500 }) });
  await sendForTask(s, userMessage(WAIT), inline(r.url()));
  await r.waitFor(2); // the snapshot, twice: the lane's later events wait behind it
  const stats = s.app.push!.service.stats();
  expect(stats.pending).toBe(3);
  expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
  r.answerWith(() => ({ status: 200 }));
  await s.app.push!.service.whenIdle();
  expect(s.app.push!.service.stats().pending).toBe(0);
});

test("R-SEND-7: an inline config on a follow-up gets the task as it was, then the follow-up's events", async () => {
  const r = await receiver();
  const waiting = await sendForTask(s, userMessage(WAIT));
  const { response } = await rpc(s).send(sendRequest(userMessage(STEPS, { taskId: waiting.id }), inline(r.url())));
  expect(response).toBeDefined();
  const got = await r.waitFor(6);
  // The service's WORKING for the follow-up, then the agent's own.
  expect(got.map(kindOf)).toEqual(["task", "statusUpdate", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
  expect(stateOf(got[0]!)).toBe("TASK_STATE_INPUT_REQUIRED");
  expect(stateOf(got[1]!)).toBe("TASK_STATE_WORKING");
});
