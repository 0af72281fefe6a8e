/**
 * Issue 34 item 4 over JSON-RPC: SSE streams on the same hub and pipe as gRPC's, with resume:
 * each event's SSE id is its resume cursor, and a reconnect with Last-Event-ID continues
 * exactly after it.
 */
import { STREAM_RESUME_EXTENSION } from "../../src/streams/index.js";
import { readSse } from "./sse-reader.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "./jsonrpc-support.js";

let s: JsonRpcSetup;
beforeAll(async () => {
  s = await startJsonRpcSetup({ A2A_STREAM_HEARTBEAT: "off" });
});
afterAll(() => s.close());

type Rpc = { jsonrpc: string; id: unknown; result?: Record<string, { status?: { state: string }; artifact?: unknown }>; error?: { code: number } };
const rpc = (data: string) => JSON.parse(data) as Rpc;
const payloadCase = (data: string) => Object.keys(rpc(data).result ?? {})[0];

function stream(method: string, params: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(s.endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": s.aliceKey, Accept: "text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: "s1", method, params }),
  });
}

test("R-JRPC-12, R-BIND-33: the SSE head and events: 200 text/event-stream, each data a JSON-RPC response with the request id, no id without resume", async () => {
  const res = await stream("SendStreamingMessage", { message: { messageId: "sse-1", role: "ROLE_USER", parts: [{ text: "story" }] } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  expect(res.headers.get("cache-control")).toBe("no-cache");
  const events = await readSse(res).rest();
  expect(events.length).toBeGreaterThan(1);
  for (const event of events) {
    expect(event.id).toBeUndefined();
    expect(event.event).toBeUndefined();
    expect(rpc(event.data)).toEqual(expect.objectContaining({ jsonrpc: "2.0", id: "s1" }));
  }
  expect(payloadCase(events[0]!.data)).toBe("task");
  expect(rpc(events.at(-1)!.data).result?.["statusUpdate"]?.status?.state).toBe("TASK_STATE_COMPLETED");
});

test("A-33, R-BIND-14: with the resume extension each event's SSE id is its cursor, and Last-Event-ID resumes exactly after it", async () => {
  let step!: () => void;
  let stepped = new Promise<void>((r) => (step = r));
  const next = async () => {
    await stepped;
    stepped = new Promise<void>((r) => (step = r));
  };
  s.scripts.set("resumable", async (ctx) => {
    await ctx.working("one");
    await next();
    await ctx.artifact({ artifactId: "a1", name: "piece", parts: ["piece"] });
    await next();
    await ctx.complete("done");
  });
  const extensions = { "A2A-Extensions": STREAM_RESUME_EXTENSION };
  const first = await stream("SendStreamingMessage", { message: { messageId: "sse-2", role: "ROLE_USER", parts: [{ text: "resumable" }] } }, extensions);
  expect(first.headers.get("a2a-extensions")).toBe(STREAM_RESUME_EXTENSION);
  const reader = readSse(first);
  const snapshot = (await reader.next())!;
  const working = (await reader.next())!;
  expect(payloadCase(snapshot.data)).toBe("task");
  expect(rpc(working.data).result?.["statusUpdate"]?.status?.state).toBe("TASK_STATE_WORKING");
  expect(working.id).toMatch(/^[A-Za-z0-9_-]+$/);
  const taskId = String((rpc(snapshot.data).result?.["task"] as { id?: string } | undefined)?.id);
  await reader.abandon(); // the client drops; the task goes on
  step(); // the artifact arrives while no one listens
  await new Promise((r) => setTimeout(r, 50));
  const resumed = await stream("SubscribeToTask", { id: taskId }, { ...extensions, "Last-Event-ID": working.id! });
  expect(resumed.status).toBe(200);
  const again = readSse(resumed);
  const missed = (await again.next())!;
  expect(payloadCase(missed.data)).toBe("artifactUpdate"); // no snapshot, nothing twice: exactly after the cursor
  step();
  const rest = await again.rest();
  expect(rest.map((e) => rpc(e.data).result?.["statusUpdate"]?.status?.state)).toEqual(["TASK_STATE_COMPLETED"]);
});

test("A-33: a Last-Event-ID that is not one of our cursors is -32602 naming the cursor, before any SSE byte", async () => {
  const res = await stream("SubscribeToTask", { id: "whatever" }, { "A2A-Extensions": STREAM_RESUME_EXTENSION, "Last-Event-ID": "not-a-cursor" });
  expect(res.headers.get("content-type")).toBe("application/json");
  const body = (await res.json()) as Rpc & { error: { data: Array<{ fieldViolations: Array<{ field: string }> }> } };
  expect(body.error.code).toBe(-32602);
  expect(body.error.data[0]!.fieldViolations[0]!.field).toBe("stream-resume-cursor");
});
