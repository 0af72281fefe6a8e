/**
 * Issue 33 finding 4 (R-PUSHD, A-12): webhook deliveries share one pool of request slots
 * (A2A_PUSH_CONCURRENCY), served fairly: round robin across principals (owner scopes) and
 * destination hosts, at most A2A_PUSH_CONCURRENCY_PER_HOST requests to one host, and at most
 * three quarters of the pool to one principal. So one principal's stalled receivers cannot delay
 * another principal's first delivery. Real HTTP receivers on loopback only: stalled ones (never
 * answer within the test) and fast ones, each on its own 127.0.0.x address, let through
 * A2A_PUSH_ALLOW_HOSTS. Principals are told apart by tenant (owner scope = tenant + principal).
 */
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { dispatchAgent, sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { loopbackResolver, pushConfig } from "./push-helpers.js";
import { startReceiver, type LoopbackHost, type Receiver } from "./receiver.js";

const agents = dispatchAgent();
const WAIT = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?");
});

const STALL = () => ({ status: 200, delayMs: 60_000 });
const open: Array<A2ATestServer | Receiver> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function server(env: Record<string, string>): Promise<A2ATestServer> {
  const s = await startA2AServer({
    agent: agents.agent,
    // A stalled request ends at the timeout, long after these tests decided.
    env: { A2A_PUSH_ALLOW_HOSTS: "127.0.0.0/8", A2A_PUSH_ALLOW_HTTP: "true", A2A_PUSH_TIMEOUT_MS: "8000", A2A_PUSH_MAX_ATTEMPTS: "1", ...env },
    pushResolver: loopbackResolver(),
  });
  open.push(s);
  return s;
}

async function receiver(host: LoopbackHost, stalled: boolean): Promise<Receiver> {
  const r = await startReceiver({ host, answer: stalled ? STALL : undefined });
  open.push(r);
  return r;
}

/** A task of `tenant` whose inline push config posts to `url`. */
const taskPushingTo = (s: A2ATestServer, tenant: string, url: string) =>
  sendForTask(s, userMessage(WAIT), { taskPushNotificationConfig: pushConfig({ url, tenant }) }, tenant);

/** Ms from now until `r` got its first request (rejects past `withinMs`). */
async function firstDelivery(r: Receiver, start: () => Promise<unknown>, withinMs: number): Promise<number> {
  const t0 = Date.now();
  await start();
  await r.waitFor(1, withinMs);
  return r.requests[0]!.atMs - t0;
}

describe("issue 33 finding 4: fair webhook scheduling", () => {
  test("one principal's 20 stalled receivers on one host do not delay another principal's first delivery (pool of 4)", async () => {
    const s = await server({ A2A_PUSH_CONCURRENCY: "4" });
    const stalled = await receiver("127.0.0.2", true);
    const fast = await receiver("127.0.0.3", false);
    for (let i = 0; i < 20; i++) await taskPushingTo(s, "acme", stalled.url(`/acme/${i}`));
    await stalled.waitFor(3, 5000);
    const ms = await firstDelivery(fast, () => taskPushingTo(s, "globex", fast.url("/globex")), 3000);
    expect(ms).toBeLessThan(2000); // before: behind 20 stalled requests, one 8 s timeout per round of 4
    // acme holds at most three quarters of the pool: one slot was always left for globex.
    expect(stalled.requests.length).toBe(3);
  });

  test("stalled receivers spread over 20 hosts do not take the whole pool either", async () => {
    const s = await server({ A2A_PUSH_CONCURRENCY: "4" });
    const fast = await receiver("127.0.0.3", false);
    const stalled: Receiver[] = [];
    for (let i = 0; i < 20; i++) stalled.push(await receiver(`127.0.1.${10 + i}`, true));
    for (const [i, r] of stalled.entries()) await taskPushingTo(s, "acme", r.url(`/acme/${i}`));
    const arrived = () => stalled.reduce((n, r) => n + r.requests.length, 0);
    const t0 = Date.now();
    while (arrived() < 3 && Date.now() - t0 < 5000) await new Promise((resolve) => setTimeout(resolve, 20));
    const ms = await firstDelivery(fast, () => taskPushingTo(s, "globex", fast.url("/globex")), 3000);
    expect(ms).toBeLessThan(2000);
    expect(arrived()).toBe(3);
  });

  test("A2A_PUSH_CONCURRENCY_PER_HOST caps requests to one host; the same principal's other hosts go on", async () => {
    const s = await server({ A2A_PUSH_CONCURRENCY: "32", A2A_PUSH_CONCURRENCY_PER_HOST: "2" });
    const stalled = await receiver("127.0.0.2", true);
    const other = await receiver("127.0.0.4", true); // another host: a cap of its own
    const fast = await receiver("127.0.0.3", false);
    for (let i = 0; i < 10; i++) await taskPushingTo(s, "acme", stalled.url(`/acme/${i}`));
    for (let i = 0; i < 10; i++) await taskPushingTo(s, "acme", other.url(`/acme/${i}`));
    await stalled.waitFor(2, 5000);
    await other.waitFor(2, 5000);
    const ms = await firstDelivery(fast, () => taskPushingTo(s, "acme", fast.url("/acme/fast")), 3000);
    expect(ms).toBeLessThan(2000);
    await new Promise((resolve) => setTimeout(resolve, 300)); // room for any request past the cap to arrive
    expect(stalled.requests.length).toBe(2);
    expect(other.requests.length).toBe(2);
  });
});
