/** mTLS identity: the client certificate's subject CN (or SAN) is the principal. */
import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config/index.js";
import { startServer, type RunningServer } from "../../src/protocol/server.js";
import { a2aStatusMapper } from "../../src/protocol/status-mapper.js";
import { rpc, scriptedAgent, sendRequest, taskOf, textOf, userMessage } from "../e2e/e2e-helpers.js";
import { captureLogger } from "../foundation/helpers.js";
import { makeTestPki, type TestPki } from "../foundation/certs.js";
import { withAuth } from "./auth-support.js";
import type { A2ATestServer } from "../support/a2a-server.js";

let pki: TestPki;
let server: RunningServer;
let client: A2AServiceClient;
beforeAll(async () => {
  pki = makeTestPki();
  const { logger } = captureLogger("warn");
  const config = loadConfig({
    argv: [],
    env: {
      A2A_LISTEN: "127.0.0.1:0",
      A2A_STORE: "memory",
      A2A_CARD_LISTEN: "off",
      A2A_PUBLIC_GRPC_ADDRESS: "127.0.0.1:50051",
      A2A_TLS_CERT: pki.serverCert,
      A2A_TLS_KEY: pki.serverKey,
      A2A_TLS_CLIENT_CA: pki.caCert,
      A2A_AUTH: "mtls",
    },
  });
  server = await startServer({ listen: config.listen, tls: config.tls, logger });
  const agent = scriptedAgent(async (ctx) => {
    await ctx.working();
    await ctx.complete(ctx.caller.principal); // the owner name carries the scheme: mtls:<CN>
  });
  const app = await createApp(config, logger, { agent });
  server.onShutdown(() => app.close(0));
  server.useHandlers(app.handlers, a2aStatusMapper);
  const creds = grpc.credentials.createSsl(readFileSync(pki.caCert), readFileSync(pki.clientKey), readFileSync(pki.clientCert));
  client = new A2AServiceClient(`localhost:${server.port}`, creds);
});
afterAll(async () => {
  client.close();
  await server.shutdown(0);
  pki.remove();
});

test("A-30: an mTLS caller is known by its certificate's subject CN, with no other credential", async () => {
  const s = { client, metadata: () => withAuth({}) } as unknown as A2ATestServer;
  const { response, error } = await rpc(s).send(sendRequest(userMessage("hi")), withAuth({}));
  expect(error).toBeUndefined();
  expect(textOf(taskOf(response!).status!.message)).toBe("mtls:a2a test client");
});

test("A-30: mtls without a client CA is a configuration error", () => {
  expect(() => loadConfig({ argv: [], env: { A2A_AUTH: "mtls" } })).toThrow(/A2A_TLS_CLIENT_CA/);
});
