/**
 * The CLI's security options against the real gRPC edge: TLS with a private CA, mutual
 * TLS with a client certificate, and the credentials it sends (bearer token, API key),
 * read back by a GetTask handler that records the metadata of the call.
 */
import type * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { TaskSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { loadConfig } from "../../src/config/index.js";
import { makeTestPki, type TestPki } from "../foundation/certs.js";
import { startTestServer, type TestServer } from "../foundation/helpers.js";
import { a2a } from "./cli-helpers.js";

let pki: TestPki;
let t: TestServer;
let seen: grpc.Metadata[] = [];
beforeAll(async () => {
  pki = makeTestPki();
  const { tls } = loadConfig({ env: { A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.serverKey, A2A_TLS_CLIENT_CA: pki.caCert } });
  t = await startTestServer({
    tls,
    handlers: {
      GetTask: async (r, call) => {
        seen.push(call.metadata as grpc.Metadata); // the gRPC binding hands grpc-js metadata
        return create(TaskSchema, { id: r.id, contextId: "ctx", status: { state: TaskState.COMPLETED } });
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  pki.remove();
});
beforeEach(() => (seen = []));

// The certificate names localhost (and 127.0.0.1); naming the host avoids Node's warning about IP server names.
const server = () => ["--server", `localhost:${t.server.port}`];
const mtls = () => ["--ca", pki.caCert, "--cert", pki.clientCert, "--key", pki.clientKey];

describe("a2a security options", () => {
  test("A-25: TLS with --ca and a client certificate (--cert/--key) reaches an mTLS server", async () => {
    const r = await a2a(["get", "t-1", ...server(), ...mtls()]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ id: "t-1", status: { state: "TASK_STATE_COMPLETED" } });
  });

  test("without the client certificate, or without TLS, it is a connection failure (exit 4)", async () => {
    expect((await a2a(["get", "t-1", ...server(), "--ca", pki.caCert])).code).toBe(4);
    expect((await a2a(["get", "t-1", ...server()])).code).toBe(4);
    expect(seen).toHaveLength(0);
  });

  test("--token sends authorization: Bearer, --api-key the key in its header; a2a-version: 1.0 always", async () => {
    await a2a(["get", "t-1", ...server(), ...mtls(), "--token", "tok-123", "--api-key", "key-456", "--api-key-header", "X-Custom-Key"]);
    expect(seen[0]!.get("authorization")).toEqual(["Bearer tok-123"]);
    expect(seen[0]!.get("x-custom-key")).toEqual(["key-456"]);
    expect(seen[0]!.get("a2a-version")).toEqual(["1.0"]);
  });

  test("A2A_TOKEN and A2A_API_KEY come from the environment (default header x-api-key)", async () => {
    await a2a(["get", "t-1", ...server(), ...mtls()], { env: { A2A_TOKEN: "env-tok", A2A_API_KEY: "env-key" } });
    expect(seen[0]!.get("authorization")).toEqual(["Bearer env-tok"]);
    expect(seen[0]!.get("x-api-key")).toEqual(["env-key"]);
  });

  test("--cert without --key, or an unreadable CA file, is a usage error (exit 2)", async () => {
    expect((await a2a(["get", "t-1", ...server(), "--cert", pki.clientCert])).code).toBe(2);
    expect((await a2a(["get", "t-1", ...server(), "--ca", "/nonexistent/ca.pem"])).code).toBe(2);
  });
});
