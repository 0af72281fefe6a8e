import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { HealthCheckRequest, HealthCheckResponse_ServingStatus, HealthClient } from "../../gen/ts-proto/grpc/health/v1/health.js";
import { loadConfig } from "../../src/config/index.js";
import type { RunningServer } from "../../src/protocol/server.js";
import { makeTestPki, type TestPki } from "./certs.js";
import { startTestServer, unary, type TestServer } from "./helpers.js";

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.remove());
let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function check(server: RunningServer, credentials: grpc.ChannelCredentials) {
  // Name the server as its certificate does; Node warns about an IP address as TLS server name.
  const client = new HealthClient(`127.0.0.1:${server.port}`, credentials, { "grpc.ssl_target_name_override": "localhost" });
  try {
    return await unary(client, client.check, HealthCheckRequest.fromPartial({}), new grpc.Metadata(), { deadline: Date.now() + 3000 });
  } finally {
    client.close();
  }
}

const read = (path: string) => readFileSync(path);

describe("TLS", () => {
  test("R-GEN-2: with a certificate and key the server speaks TLS only", async () => {
    const { tls } = loadConfig({ env: { A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.serverKey } });
    t = await startTestServer({ handlers: {}, tls });
    const ok = await check(t.server, grpc.credentials.createSsl(read(pki.caCert)));
    expect(ok.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    const plain = await check(t.server, grpc.credentials.createInsecure());
    expect(plain.error?.code).toBe(grpc.status.UNAVAILABLE);
  });

  test("A-25: with a client CA the server requires a client certificate signed by it (mTLS)", async () => {
    const { tls } = loadConfig({
      env: { A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.serverKey, A2A_TLS_CLIENT_CA: pki.caCert },
    });
    t = await startTestServer({ handlers: {}, tls });
    const anonymous = await check(t.server, grpc.credentials.createSsl(read(pki.caCert)));
    expect(anonymous.error?.code).toBe(grpc.status.UNAVAILABLE);
    const withCert = await check(t.server, grpc.credentials.createSsl(read(pki.caCert), read(pki.clientKey), read(pki.clientCert)));
    expect(withCert.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});
