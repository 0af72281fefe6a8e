/**
 * A2A_V03_REST_PATH=off: the listener serves no v0.3 HTTP+JSON base; the v1.0 one, and the
 * v0.3 JSON-RPC setting, are untouched.
 */
import { startJsonRpcSetup, type JsonRpcSetup } from "../jsonrpc/jsonrpc-support.js";

let s: JsonRpcSetup;
beforeAll(async () => {
  s = await startJsonRpcSetup({ A2A_V03_REST_PATH: "off" });
});
afterAll(() => s.close());

test("A2A_V03_REST_PATH=off: /a2a/v0.3/rest is no binding (the listener's 404), while /a2a/rest serves A2A 1.0", async () => {
  const headers = { "X-API-Key": s.aliceKey };
  for (const path of ["/v1/card", "/v1/tasks/t1"]) {
    const res = await fetch(`${s.base}/a2a/v0.3/rest${path}`, { headers });
    const body = (await res.json()) as Record<string, unknown>;
    expect([path, res.status, body["code"]]).toEqual([path, 404, undefined]); // not the v0.3 binding's {code, message}
  }
  const v1 = await fetch(`${s.base}/a2a/rest/extendedAgentCard`, { headers: { ...headers, "A2A-Version": "1.0" } });
  expect(v1.status).toBe(200);
});
