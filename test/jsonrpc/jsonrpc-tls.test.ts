/**
 * R-BIND-9, R-BIND-5: the HTTP listener with the bindings uses the gRPC listener's TLS settings;
 * with a client CA, a JSON-RPC caller is known by its client certificate, as over gRPC.
 */
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { makeTestPki, type TestPki } from "../foundation/certs.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

let pki: TestPki;
let s: A2ATestServer;
beforeAll(async () => {
  pki = makeTestPki();
  s = await startA2AServer({
    env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.serverKey, A2A_TLS_CLIENT_CA: pki.caCert, A2A_AUTH: "mtls" },
    advertiseBoundAddress: true,
  });
});
afterAll(async () => {
  await s?.close();
  pki?.remove();
});

function post(body: unknown, withClientCert: boolean): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: s.app.cardPort,
        path: "/a2a/jsonrpc",
        method: "POST",
        ca: readFileSync(pki.caCert),
        ...(withClientCert ? { cert: readFileSync(pki.clientCert), key: readFileSync(pki.clientKey) } : {}),
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

test("R-BIND-9, R-BIND-16: the card lists an https JSON-RPC URL", () => {
  expect(s.app.card.supportedInterfaces[1]?.url).toBe(`https://127.0.0.1:${s.app.cardPort}/a2a/jsonrpc`);
});

test("R-BIND-5, A-30, A-31: over mTLS the JSON-RPC caller is the certificate's principal", async () => {
  const sent = await post(
    { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "tls-1", role: "ROLE_USER", parts: [{ text: "story" }] } } },
    true,
  );
  expect(sent.status).toBe(200);
  const task = (sent.json["result"] as { task: { id: string } }).task;
  const line = s.lines.find((l) => l["task_id"] === task.id && l["binding"] === "jsonrpc");
  expect(line?.["principal"]).toBe("mtls:a2a test client");
});

test("R-BIND-9: without a client certificate the TLS handshake is refused, before any HTTP", async () => {
  await expect(post({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }, false)).rejects.toThrow();
});
