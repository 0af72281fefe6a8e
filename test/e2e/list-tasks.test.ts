/**
 * ListTasks (R-LIST-1..9, A-13) through the real gRPC server: page sizes, keyset page tokens,
 * order, filters, include_artifacts, history_length, total_size.
 */
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import type { Task } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import type { Timestamp } from "../../gen/ts-proto/google/protobuf/timestamp.js";
import { TaskState, dispatchAgent, expectBadField, rpc, sendForTask, userMessage } from "./e2e-helpers.js";

let s: A2ATestServer;
const agents = dispatchAgent();
/** Works, adds an artifact, completes: three history entries (user, working, completed). */
const FINISH = agents.on(async (ctx) => {
  await ctx.working("on it");
  await ctx.artifact({ artifactId: "out", parts: ["result"] }, { lastChunk: true });
  await ctx.complete("done");
});
/** Stops at INPUT_REQUIRED; a follow-up completes it. */
const ASK = agents.on(async (ctx) => {
  if (ctx.task) {
    await ctx.working();
    return ctx.complete("thanks");
  }
  await ctx.working();
  await ctx.requireInput("more?");
});

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent });
});
afterAll(() => s.close());

async function make(count: number, contextId: string, word = FINISH): Promise<Task[]> {
  const made: Task[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = Array.from({ length: Math.min(20, count - i) }, () => sendForTask(s, userMessage(word, { contextId })));
    made.push(...(await Promise.all(batch)));
  }
  return made;
}

const micros = (ts: Timestamp | undefined) => ts!.seconds * 1_000_000 + Math.floor(ts!.nanos / 1000);

/** Pages through a query; `between` runs after each page (to change tasks mid-way). */
async function pageAll(query: Parameters<ReturnType<typeof rpc>["list"]>[0], between?: (page: number) => Promise<void>) {
  const seen: Task[] = [];
  const pages: number[] = [];
  let pageToken = "";
  for (let page = 0; page < 1000; page++) {
    const { response, error } = await rpc(s).list({ ...query, pageToken });
    if (error) throw error;
    seen.push(...response!.tasks);
    pages.push(response!.tasks.length);
    if (response!.nextPageToken === "") return { seen, pages, last: response! };
    pageToken = response!.nextPageToken;
    await between?.(page);
  }
  throw new Error("paging did not end");
}

test("R-LIST-3 / R-LIST-5: without page_size at most 50 come back, page_size reports what was applied, total_size counts every match", async () => {
  await make(120, "ctx-big");
  const { response } = await rpc(s).list({ contextId: "ctx-big" });
  expect(response!.tasks).toHaveLength(50);
  expect(response!.pageSize).toBe(50);
  expect(response!.totalSize).toBe(120);
  expect(response!.nextPageToken).not.toBe("");
});

test("R-LIST-3: page_size 1 and 100 are the bounds; 0, 101 and -1 are INVALID_ARGUMENT on page_size (A-13)", async () => {
  expect((await rpc(s).list({ contextId: "ctx-big", pageSize: 1 })).response!.tasks).toHaveLength(1);
  const hundred = (await rpc(s).list({ contextId: "ctx-big", pageSize: 100 })).response!;
  expect(hundred.tasks).toHaveLength(100);
  expect(hundred.pageSize).toBe(100);
  for (const pageSize of [0, 101, -1, 1000]) {
    const description = expectBadField((await rpc(s).list({ pageSize })).error, "page_size");
    expect(description).toMatch(/between 1 and 100/);
  }
});

test('R-LIST-6 / A-13: newest status first; paging 120 tasks 7 at a time sees each exactly once; next_page_token is "" only on the last page (R-LIST-4)', async () => {
  const { seen, pages, last } = await pageAll({ contextId: "ctx-big", pageSize: 7 });
  expect(seen).toHaveLength(120);
  expect(new Set(seen.map((t) => t.id)).size).toBe(120);
  expect(pages.slice(0, -1).every((n) => n === 7)).toBe(true);
  expect(pages.at(-1)).toBe(120 % 7);
  expect(last.totalSize).toBe(120);
  // Newest first (this server's clock gives every status change its own microsecond, so no ties here).
  const times = seen.map((t) => micros(t.status!.timestamp));
  expect(times).toEqual([...times].sort((a, b) => b - a));
  // The one-page case: next_page_token is "" when everything fits.
  const all = (await rpc(s).list({ contextId: "ctx-big", pageSize: 100 })).response!;
  expect(all.nextPageToken).not.toBe("");
  const tail = (await rpc(s).list({ contextId: "ctx-big", pageSize: 100, pageToken: all.nextPageToken })).response!;
  expect(tail.tasks).toHaveLength(20);
  expect(tail.nextPageToken).toBe("");
});

test("A-13 / R-LIST-2: page tokens stay valid while tasks change; unchanged tasks are each seen exactly once, none twice", async () => {
  const stable = await make(40, "ctx-moving");
  const movers = await make(10, "ctx-moving", ASK);
  let created: Task[] = [];
  const { seen } = await pageAll({ contextId: "ctx-moving", pageSize: 7 }, async (page) => {
    if (page === 1) created = await make(5, "ctx-moving"); // new tasks go in front of the cursor
    if (page === 2) for (const t of movers.slice(0, 5)) await rpc(s).cancel({ id: t.id }); // status changes move tasks to the front
    if (page === 3) for (const t of movers.slice(5)) await sendForTask(s, userMessage(ASK, { taskId: t.id }));
  });
  const ids = seen.map((t) => t.id);
  expect(new Set(ids).size).toBe(ids.length); // no task twice
  for (const t of stable) expect(ids.filter((id) => id === t.id)).toHaveLength(1);
  expect(created).toHaveLength(5);
  expect((await rpc(s).list({ contextId: "ctx-moving" })).response!.totalSize).toBe(55);
});

test("R-LIST-7: filters — context_id exact, status = current state, status_timestamp_after inclusive; total_size counts after filters (A-13)", async () => {
  const done = await make(3, "ctx-filter");
  const waiting = await make(2, "ctx-filter", ASK);
  await make(2, "ctx-filter-other");
  expect((await rpc(s).list({ contextId: "ctx-filter" })).response!.totalSize).toBe(5);
  expect((await rpc(s).list({ contextId: "ctx-filter-" })).response!.totalSize).toBe(0); // exact, not a prefix
  const inputRequired = (await rpc(s).list({ contextId: "ctx-filter", status: TaskState.TASK_STATE_INPUT_REQUIRED })).response!;
  expect(inputRequired.totalSize).toBe(2);
  expect(new Set(inputRequired.tasks.map((t) => t.id))).toEqual(new Set(waiting.map((t) => t.id)));
  const completed = (await rpc(s).list({ contextId: "ctx-filter", status: TaskState.TASK_STATE_COMPLETED })).response!;
  expect(new Set(completed.tasks.map((t) => t.id))).toEqual(new Set(done.map((t) => t.id)));
  expect((await rpc(s).list({ contextId: "ctx-filter", status: TaskState.TASK_STATE_CANCELED })).response).toMatchObject({
    tasks: [],
    totalSize: 0,
    nextPageToken: "",
  });

  // Inclusive: the task whose status timestamp equals the bound is kept, older ones are not.
  const all = (await rpc(s).list({ contextId: "ctx-filter" })).response!.tasks; // newest first
  const pivot = all[2]!;
  const after = (await rpc(s).list({ contextId: "ctx-filter", statusTimestampAfter: pivot.status!.timestamp })).response!;
  expect(after.tasks.map((t) => t.id)).toEqual(all.slice(0, 3).map((t) => t.id));
  expect(after.totalSize).toBe(3);
  const future = { seconds: Math.floor(Date.now() / 1000) + 3600, nanos: 0 };
  expect((await rpc(s).list({ contextId: "ctx-filter", statusTimestampAfter: future })).response!.totalSize).toBe(0);
  // Filters combine.
  const both = (await rpc(s).list({ contextId: "ctx-filter", status: TaskState.TASK_STATE_INPUT_REQUIRED, statusTimestampAfter: pivot.status!.timestamp }))
    .response!;
  expect(
    both.tasks.every((t) => t.status!.state === TaskState.TASK_STATE_INPUT_REQUIRED && micros(t.status!.timestamp) >= micros(pivot.status!.timestamp)),
  ).toBe(true);
});

test("R-LIST-8: artifacts are left out unless include_artifacts is true", async () => {
  await make(2, "ctx-artifacts");
  const without = (await rpc(s).list({ contextId: "ctx-artifacts" })).response!;
  expect(without.tasks.map((t) => t.artifacts)).toEqual([[], []]);
  const explicitFalse = (await rpc(s).list({ contextId: "ctx-artifacts", includeArtifacts: false })).response!;
  expect(explicitFalse.tasks.map((t) => t.artifacts)).toEqual([[], []]);
  const withArtifacts = (await rpc(s).list({ contextId: "ctx-artifacts", includeArtifacts: true })).response!;
  expect(withArtifacts.tasks.map((t) => t.artifacts.map((a) => a.artifactId))).toEqual([["out"], ["out"]]);
});

test("R-LIST-9: history_length applies per task (0 = none, N = most recent N, unset = all)", async () => {
  await make(2, "ctx-history");
  const full = (await rpc(s).list({ contextId: "ctx-history" })).response!.tasks;
  expect(full.map((t) => t.history.length)).toEqual([3, 3]);
  expect((await rpc(s).list({ contextId: "ctx-history", historyLength: 0 })).response!.tasks.map((t) => t.history)).toEqual([[], []]);
  const one = (await rpc(s).list({ contextId: "ctx-history", historyLength: 1 })).response!.tasks;
  expect(one.map((t) => t.history)).toEqual(full.map((t) => t.history.slice(-1)));
});

describe("A-13: page tokens this server did not issue for this query are INVALID_ARGUMENT on page_token", () => {
  let token: string;
  beforeAll(async () => {
    token = (await rpc(s).list({ contextId: "ctx-big", pageSize: 5 })).response!.nextPageToken;
  });

  test.each([
    ["garbage", () => "not-a-token"],
    ["empty signature", () => `${token.split(".")[0]}.`],
    ["forged body with the old signature", () => `${Buffer.from(JSON.stringify([0, "x"])).toString("base64url")}.${token.split(".")[1]}`],
    ["tampered signature", () => `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`],
    ["extra segment", () => `${token}.x`],
  ])("A-13: refused page token (%s)", async (_name, make) => {
    const { error } = await rpc(s).list({ contextId: "ctx-big", pageSize: 5, pageToken: make() });
    const description = expectBadField(error, "page_token");
    expect(description).toMatch(/next_page_token/);
  });

  test("A-13: a token issued for other filters (context, status, timestamp) is refused; page size and artifacts may change", async () => {
    for (const other of [
      { contextId: "ctx-filter" },
      { contextId: "ctx-big", status: TaskState.TASK_STATE_COMPLETED },
      { contextId: "ctx-big", statusTimestampAfter: { seconds: 1, nanos: 0 } },
    ]) {
      expectBadField((await rpc(s).list({ ...other, pageToken: token })).error, "page_token");
    }
    const resized = await rpc(s).list({ contextId: "ctx-big", pageSize: 9, includeArtifacts: true, pageToken: token });
    expect(resized.error).toBeUndefined();
    expect(resized.response!.tasks).toHaveLength(9);
  });
});

test("R-LIST-7 / A-13: an unknown status value and a negative history_length are INVALID_ARGUMENT naming the field", async () => {
  expectBadField((await rpc(s).list({ status: 99 as TaskState })).error, "status");
  expectBadField((await rpc(s).list({ historyLength: -1 })).error, "history_length");
});

test("R-LIST-1: an empty scope lists nothing and still answers every field", async () => {
  const { response } = await rpc(s).list({ tenant: "nobody-here" });
  expect(response).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
});
