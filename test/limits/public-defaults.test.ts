/**
 * Issue 33, finding 12: defaults fit for a public service. With authentication on, per-principal
 * limits a server sustains while one principal spends them (local anonymous use keeps today's);
 * failed authentication is rate-limited per client address; an optional quota bounds a
 * principal's stored tasks.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RetryInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { loadConfig } from "../../src/config/index.js";
import { AUTHENTICATED_DEFAULT_LIMITS, DEFAULT_LIMITS, loadLimitsConfig } from "../../src/limits/index.js";
import { errorInfo, expectAuthError, withAuth } from "../auth/auth-support.js";
import { streamSend, subscribe } from "../auth/stream-support.js";
import { rpc, scriptedAgent, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

const alice = newApiKey();
const bob = newApiKey();
let dir: string;
let keysFile: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "a2a-public-limits-"));
  keysFile = join(dir, "keys");
  const line = (key: string, principal: string) => apiKeyLine(key, { principal, tenants: undefined, scopes: [] });
  writeFileSync(keysFile, `${line(alice, "alice")}\n${line(bob, "bob")}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const asking = scriptedAgent(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?");
});
const keyed = (key: string) => withAuth({ "x-api-key": key });

function expectExhausted(error: grpc.ServiceError | undefined, reason: string, message: RegExp): void {
  expect({ code: error?.code, reason: errorInfo(error)?.reason, domain: errorInfo(error)?.domain }).toEqual({
    code: grpc.status.RESOURCE_EXHAUSTED,
    reason,
    domain: "limits.a2a-grpc-server",
  });
  expect(error!.details).toMatch(message);
  const raw = error!.metadata.get("grpc-status-details-bin")[0] as Buffer;
  const retry = Status.decode(raw).details.find((d) => d.typeUrl === "type.googleapis.com/google.rpc.RetryInfo");
  expect(retry && RetryInfo.decode(retry.value).retryDelay).toBeDefined();
}

describe("per-principal defaults (issue 33 #12)", () => {
  test("R-SEC-6: with A2A_AUTH set the defaults are the public ones; without it local anonymous use stays unthrottled", () => {
    const withAuthOn = loadConfig({ argv: [], env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: keysFile } }).limits;
    expect(withAuthOn).toEqual(AUTHENTICATED_DEFAULT_LIMITS);
    expect(withAuthOn).toMatchObject({ ratePerSecond: 100, burst: 200, runsPerPrincipal: 32, streamsPerPrincipal: 32, tasksPerPrincipal: 0 });
    expect(loadConfig({ argv: [], env: {} }).limits).toEqual(DEFAULT_LIMITS);
    expect(DEFAULT_LIMITS).toMatchObject({ ratePerSecond: 50_000, runsPerPrincipal: 10_000 });
    // A setting still wins over either default; the burst follows a rate that is set.
    const raw: Record<string, string> = { limitRate: "7" };
    expect(loadLimitsConfig((key) => raw[key], true)).toMatchObject({ ratePerSecond: 7, burst: 14 });
  });

  test("R-SEC-6: with authentication on and no limit set, one principal past its open streams is TOO_MANY_STREAMS while another goes on", async () => {
    const s = await startA2AServer({ agent: asking, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: keysFile } });
    try {
      const id = taskOf((await rpc(s).send(sendRequest(userMessage("ask")), keyed(alice))).response!).id;
      const allowed = AUTHENTICATED_DEFAULT_LIMITS.streamsPerPrincipal;
      const open = Array.from({ length: allowed }, () => subscribe(s.client, id, keyed(alice)));
      for (let i = 0; i < 500 && open.some((o) => o.events.length === 0); i++) await new Promise((r) => setTimeout(r, 10));
      expect(open.filter((o) => o.events.length > 0)).toHaveLength(allowed);
      const oneMore = await subscribe(s.client, id, keyed(alice)).result;
      expectExhausted(oneMore.error, "TOO_MANY_STREAMS", /"apikey:alice" has too many open streams/);
      // Bob's task is his own; his first stream opens.
      const bobsTask = taskOf((await rpc(s).send(sendRequest(userMessage("ask")), keyed(bob))).response!).id;
      const bobs = subscribe(s.client, bobsTask, keyed(bob));
      for (let i = 0; i < 200 && bobs.events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(bobs.events.length).toBeGreaterThan(0);
      for (const stream of [...open, bobs]) stream.cancel();
    } finally {
      await s.close();
    }
  });
});

describe("failed authentication per client address (issue 33 #12)", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await startA2AServer({ agent: asking, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: keysFile, A2A_AUTH_FAILURE_RATE: "1" } });
  });
  afterAll(() => s.close());

  test("R-SEC-6: past its failures' burst an address is RESOURCE_EXHAUSTED before its credential is checked, then recovers", async () => {
    // A2A_AUTH_FAILURE_RATE=1: 5 refused credentials at once, then one a second.
    for (let i = 0; i < 5; i++) {
      expectAuthError((await rpc(s).list({}, keyed(newApiKey()))).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /x-api-key/);
    }
    expectExhausted((await rpc(s).list({}, keyed(newApiKey()))).error, "AUTH_FAILURES_LIMITED", /too many failed authentication attempts/);
    // Checked before the credential: a guesser learns nothing, not even from a right guess.
    expectExhausted((await rpc(s).list({}, keyed(alice))).error, "AUTH_FAILURES_LIMITED", /retry in \d+ ms/);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await rpc(s).list({}, keyed(alice))).error).toBeUndefined();
  });
});

describe("stored tasks per principal (issue 33 #12)", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await startA2AServer({ agent: asking, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: keysFile, A2A_LIMIT_TASKS_PER_PRINCIPAL: "2" } });
  });
  afterAll(() => s.close());

  test("R-SEC-6: a SendMessage that would create a task past the quota is RESOURCE_EXHAUSTED and writes nothing; follow-ups and other principals go on", async () => {
    const first = await rpc(s).send(sendRequest(userMessage("one")), keyed(alice));
    const second = await rpc(s).send(sendRequest(userMessage("two")), keyed(alice));
    expect([first.error, second.error]).toEqual([undefined, undefined]);

    const third = await rpc(s).send(sendRequest(userMessage("three")), keyed(alice));
    expectExhausted(third.error, "TASK_QUOTA_EXCEEDED", /"apikey:alice" has 2 stored tasks, the most this server keeps per principal \(2\)/);
    const streamed = await streamSend(s.client, sendRequest(userMessage("three, streamed")), keyed(alice)).result;
    expectExhausted(streamed.error, "TASK_QUOTA_EXCEEDED", /stored tasks/);
    expect(streamed.events).toEqual([]);
    expect((await rpc(s).list({}, keyed(alice))).response!.totalSize).toBe(2);

    // A message to an existing task creates none.
    const taskId = taskOf(first.response!).id;
    expect((await rpc(s).send(sendRequest(userMessage("more", { taskId })), keyed(alice))).error).toBeUndefined();
    expect((await rpc(s).send(sendRequest(userMessage("bob's first")), keyed(bob))).error).toBeUndefined();
  });
});
