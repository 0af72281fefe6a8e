/**
 * Issue 34 item 5: the HTTP listener's rules around the JSON-RPC binding: CORS only for the
 * configured origins, a body that grows past the limit without declaring its length, the path
 * setting, and JSON-RPC off leaving the card where it was.
 */
import { startA2AServer } from "../support/a2a-server.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "./jsonrpc-support.js";

let s: JsonRpcSetup;
beforeAll(async () => {
  s = await startJsonRpcSetup({ A2A_CORS_ORIGINS: "https://app.example", A2A_MAX_MESSAGE_BYTES: "65536" });
});
afterAll(() => s.close());

test("A-35: CORS is granted to the configured origin only, preflight included", async () => {
  const preflight = await fetch(s.endpoint, {
    method: "OPTIONS",
    headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,a2a-version" },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example");
  expect(preflight.headers.get("access-control-allow-headers")).toMatch(/A2A-Version/);
  const other = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }), { Origin: "https://evil.example" });
  expect(other.headers.get("access-control-allow-origin")).toBeNull();
  const allowed = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }), { Origin: "https://app.example" });
  expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
});

test("A-35: without A2A_CORS_ORIGINS the binding sends no CORS headers", async () => {
  const plain = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
  try {
    const res = await fetch(`http://127.0.0.1:${plain.app.cardPort}/a2a/jsonrpc`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Origin: "https://app.example" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }),
    });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32001);
  } finally {
    await plain.close();
  }
});

test("R-BIND-32: a chunked body that grows past A2A_MAX_MESSAGE_BYTES is cut off with 413, the server unharmed", async () => {
  const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < 64) controller.enqueue(chunk);
      else controller.close();
    },
  });
  const res = await fetch(s.endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": s.aliceKey },
    body,
    duplex: "half",
  } as RequestInit);
  expect(res.status).toBe(413);
  expect(((await res.json()) as { id: unknown; error: { code: number } }).error.code).toBe(-32600);
  const after = await s.post(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "x" } }));
  expect(((await after.json()) as { error: { code: number } }).error.code).toBe(-32001);
});

test("A-35: A2A_JSONRPC_PATH moves the binding (and the card's URL); off serves none and lists none", async () => {
  const moved = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_JSONRPC_PATH: "/rpc" }, advertiseBoundAddress: true });
  const off = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_JSONRPC_PATH: "off" }, advertiseBoundAddress: true });
  try {
    const v10 = (itf: { protocolVersion: string }) => itf.protocolVersion === "1.0"; // the 0.3 entries: test/card/v03-card.test.ts
    expect(moved.app.card.supportedInterfaces.filter(v10).map((i) => i.url)).toEqual([moved.target, `http://127.0.0.1:${moved.app.cardPort}/rpc`]);
    expect(off.app.card.supportedInterfaces.filter(v10).map((i) => i.protocolBinding)).toEqual(["GRPC"]);
    const card = await fetch(`http://127.0.0.1:${off.app.cardPort}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${off.app.cardPort}/a2a/jsonrpc`, { method: "POST", body: "{}" })).status).toBe(404);
  } finally {
    await moved.close();
    await off.close();
  }
});

test("R-BIND-16: A2A_PUBLIC_HTTP_URL is the base of the card's JSON-RPC URL", async () => {
  const proxied = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_PUBLIC_HTTP_URL: "https://agent.example.com/" } });
  try {
    expect(proxied.app.card.supportedInterfaces[1]?.url).toBe("https://agent.example.com/a2a/jsonrpc");
  } finally {
    await proxied.close();
  }
});

test("shutdown: once runs are stopping, a new JSON-RPC call is refused as UNAVAILABLE (-32603), as gRPC's are", async () => {
  const stopping = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
  try {
    await stopping.app.stopRuns(0);
    const res = await fetch(`http://127.0.0.1:${stopping.app.cardPort}/a2a/jsonrpc`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "GetTask", params: { id: "x" } }),
    });
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 4, error: { code: -32603, message: "server is shutting down", data: [] } });
  } finally {
    await stopping.close();
  }
});

test("R-BIND-8, A-15: with authentication off the version is still checked first, before params are decoded", async () => {
  const open = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
  try {
    const res = await fetch(`http://127.0.0.1:${open.app.cardPort}/a2a/jsonrpc`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: { status: "NOT_A_STATE" } }),
    });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32009);
  } finally {
    await open.close();
  }
});
