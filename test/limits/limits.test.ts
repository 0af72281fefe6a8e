/**
 * Limits (R-SEC-6 rate limiting): request rate per principal (token bucket), open streams per
 * principal, agent runs per principal and in all. Over a limit: RESOURCE_EXHAUSTED with a
 * google.rpc.RetryInfo; memory stays bounded with thousands of principals.
 */
import * as grpc from "@grpc/grpc-js";
import { RetryInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import { ConcurrencyLimiter, RateLimiter, RunLimiter } from "../../src/limits/index.js";
import { errorInfo } from "../auth/auth-support.js";
import { subscribe } from "../auth/stream-support.js";
import { gate, rpc, scriptedAgent, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer } from "../support/a2a-server.js";

function retryDelayMs(error: grpc.ServiceError | undefined): number | undefined {
  const raw = error?.metadata?.get("grpc-status-details-bin")[0];
  if (!(raw instanceof Buffer)) return undefined;
  const any = Status.decode(raw).details.find((d) => d.typeUrl === "type.googleapis.com/google.rpc.RetryInfo");
  if (!any) return undefined;
  const delay = RetryInfo.decode(any.value).retryDelay!;
  return delay.seconds * 1000 + delay.nanos / 1e6;
}

function expectExhausted(error: grpc.ServiceError | undefined, reason: string): void {
  expect({ code: error?.code, reason: errorInfo(error)?.reason, domain: errorInfo(error)?.domain }).toEqual({
    code: grpc.status.RESOURCE_EXHAUSTED,
    reason,
    domain: "limits.a2a-grpc-server",
  });
  expect(retryDelayMs(error)).toBeGreaterThan(0);
}

const quick = scriptedAgent(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?");
});

test("limits: over its request rate a principal gets RESOURCE_EXHAUSTED / RATE_LIMITED with RetryInfo", async () => {
  const s = await startA2AServer({ agent: quick, env: { A2A_LIMIT_RATE: "1", A2A_LIMIT_BURST: "3" } });
  try {
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await rpc(s).list({}));
    expect(results.slice(0, 3).map((r) => r.error)).toEqual([undefined, undefined, undefined]);
    expectExhausted(results[3]!.error, "RATE_LIMITED");
    expect(retryDelayMs(results[3]!.error)).toBeLessThanOrEqual(1000);
  } finally {
    await s.close();
  }
});

test("limits: agent runs per principal: the next run is refused until one ends, and nothing is written for it", async () => {
  const release = gate<void>();
  const agent = scriptedAgent(async (ctx) => {
    await ctx.working();
    await release.promise;
    await ctx.complete("done");
  });
  const s = await startA2AServer({ agent, env: { A2A_LIMIT_RUNS_PER_PRINCIPAL: "2" } });
  try {
    const first = await Promise.all([0, 1].map(() => rpc(s).send(sendRequest(userMessage("go"), { returnImmediately: true }))));
    expect(first.map((r) => r.error)).toEqual([undefined, undefined]);
    const third = await rpc(s).send(sendRequest(userMessage("go"), { returnImmediately: true }));
    expectExhausted(third.error, "TOO_MANY_RUNS");
    expect((await rpc(s).list({})).response!.tasks).toHaveLength(2);
    release.open();
    const id = taskOf(first[0]!.response!).id;
    for (let i = 0; i < 200 && s.app.service.runningCount > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect((await rpc(s).get({ id })).error).toBeUndefined();
    expect((await rpc(s).send(sendRequest(userMessage("go"), { returnImmediately: true }))).error).toBeUndefined();
  } finally {
    release.open();
    await s.close();
  }
});

test("limits: open streams per principal: one stream more is RESOURCE_EXHAUSTED / TOO_MANY_STREAMS; closing one frees it", async () => {
  const s = await startA2AServer({ agent: quick, env: { A2A_LIMIT_STREAMS_PER_PRINCIPAL: "2" } });
  try {
    const id = taskOf((await rpc(s).send(sendRequest(userMessage("ask")))).response!).id;
    const open = [subscribe(s.client, id, s.metadata()), subscribe(s.client, id, s.metadata())];
    for (let i = 0; i < 200 && open.some((o) => o.events.length === 0); i++) await new Promise((r) => setTimeout(r, 10));
    const third = await subscribe(s.client, id, s.metadata()).result;
    expectExhausted(third.error, "TOO_MANY_STREAMS");
    open[0]!.cancel();
    await open[0]!.result;
    let fourth = subscribe(s.client, id, s.metadata());
    for (let i = 0; i < 50 && fourth.events.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      if ((await Promise.race([fourth.result, Promise.resolve(undefined)]))?.error) fourth = subscribe(s.client, id, s.metadata()); // the cancel may not have reached the server yet
    }
    expect(fourth.events.length).toBeGreaterThan(0);
    fourth.cancel();
    open[1]!.cancel();
  } finally {
    await s.close();
  }
});

test("limits: memory stays bounded with 1,000+ principals (the tables follow what runs, not who ever called)", () => {
  const rate = new RateLimiter(10, 20, 1_000);
  for (let i = 0; i < 5_000; i++) rate.take(`principal-${i}`);
  expect(rate.principals).toBeLessThanOrEqual(1_000);
  const streams = new ConcurrencyLimiter(3);
  for (let i = 0; i < 5_000; i++) expect(streams.acquire(`principal-${i}`)).toBe("ok");
  for (let i = 0; i < 5_000; i++) streams.release(`principal-${i}`);
  expect(streams.principals).toBe(0);
  const runs = new RunLimiter(1, 2);
  const a = runs.admit({ tenant: "", principal: "a" });
  expect(() => runs.admit({ tenant: "", principal: "a" })).toThrow(/agent runs going/);
  runs.admit({ tenant: "", principal: "b" });
  expect(() => runs.admit({ tenant: "", principal: "c" })).toThrow(/retry later/);
  a();
  a(); // twice is once
  expect(runs.running).toBe(1);
});
