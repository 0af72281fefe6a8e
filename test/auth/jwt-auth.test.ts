/**
 * Bearer JWT authentication at the edge (R-SEC-1, A-30, A-15) through the ts-proto client:
 * every kind of bad token is UNAUTHENTICATED with an ErrorInfo and a message naming what is
 * expected; a valid one reaches the agent as ctx.caller; a missing scope is PERMISSION_DENIED.
 */
import * as grpc from "@grpc/grpc-js";
import { createHmac } from "node:crypto";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { expectA2AError, rpc, scriptedAgent, sendRequest, taskOf, textOf, userMessage } from "../e2e/e2e-helpers.js";
import { AUDIENCE, ISSUER, bearer, expectAuthError, makeIssuer, startJwksServer, withAuth, type TestIssuer } from "./auth-support.js";

const callerAgent = scriptedAgent(async (ctx) => {
  const { tenant, principal, scheme, scopes, claims } = ctx.caller;
  await ctx.working();
  await ctx.complete(JSON.stringify({ tenant, principal, scheme, scopes, sub: claims?.["sub"], team: claims?.["team"] }));
});

let issuer: TestIssuer;
let s: A2ATestServer;
beforeAll(async () => {
  issuer = await makeIssuer("ES256");
  s = await startA2AServer({ agent: callerAgent, env: issuer.env({ A2A_AUTH_SCOPES: "CancelTask=tasks.cancel", A2A_JWT_TENANTS_CLAIM: "tenants" }) });
});
afterAll(async () => {
  await s.close();
  issuer.remove();
});

const send = (md: grpc.Metadata, tenant = "") => rpc(s).send(sendRequest(userMessage("hi"), undefined, tenant), md);

describe("JWT bearer authentication (A-30, R-SEC-1)", () => {
  test("A-30 A-31: a valid token reaches the agent as ctx.caller: principal = jwt:<iss>#<sub>, scopes, claims, tenant", async () => {
    const token = await issuer.token({ sub: "alice", scope: "tasks.read tasks.write", team: "blue" });
    const { response, error } = await send(bearer(token));
    expect(error).toBeUndefined();
    const text = textOf(taskOf(response!).status!.message);
    expect(text).toMatch(/^{/);
    const seen = JSON.parse(text);
    expect(seen).toEqual({ tenant: "", principal: `jwt:${ISSUER}#alice`, scheme: "jwt", scopes: ["tasks.read", "tasks.write"], sub: "alice", team: "blue" });
  });

  test("A-30: no credential is UNAUTHENTICATED / CREDENTIALS_MISSING naming the Bearer scheme", async () => {
    const { error } = await send(withAuth({}));
    expectAuthError(error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_MISSING", /authorization: Bearer <JWT>/);
  });

  test.each([
    ["not a Bearer entry", () => Promise.resolve("Basic YWxpY2U6cHc="), /not a Bearer token/],
    ["garbage after Bearer", () => Promise.resolve("Bearer not.a.jwt"), /malformed/],
    ["an expired token", () => issuer.token({}, { expiresIn: Math.floor(Date.now() / 1000) - 120 }).then((t) => `Bearer ${t}`), /expired/],
    ["a wrong issuer", () => issuer.token({}, { issuer: "https://evil.test" }).then((t) => `Bearer ${t}`), /iss "https:\/\/issuer.test"/],
    ["a wrong audience", () => issuer.token({}, { audience: "someone-else" }).then((t) => `Bearer ${t}`), /aud "a2a-test"/],
    ["a token without sub", () => issuer.token({ sub: undefined }).then((t) => `Bearer ${t}`), /sub/],
    ["a 20 KiB token", () => Promise.resolve(`Bearer ${"a".repeat(20_000)}`), /longer than/],
  ])("A-30: %s is UNAUTHENTICATED / CREDENTIALS_INVALID, naming what is expected", async (_what, make, mentions) => {
    const { error } = await send(withAuth({ authorization: await make() }));
    expectAuthError(error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", mentions);
    expect(error!.details).toMatch(/expected/);
  });

  test("A-30: a token signed by another key does not verify", async () => {
    const other = await makeIssuer("ES256");
    const { error } = await send(bearer(await other.token()));
    expectAuthError(error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /signature/);
    other.remove();
  });

  test("A-30: alg none and HMAC signed with the public key are refused (algorithm allow-list)", async () => {
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const claims = { sub: "mallory", iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 };
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
    const signingInput = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(claims)}`;
    const hmac = `${signingInput}.${createHmac("sha256", issuer.publicKeyPem).update(signingInput).digest("base64url")}`;
    for (const token of [none, hmac]) {
      const { error } = await send(bearer(token));
      expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(error!.details).toMatch(/algorithm is not allowed|malformed/);
    }
  });

  test("A-30: a token with an algorithm outside the allow-list is refused even when its signature is right", async () => {
    const rsa = await makeIssuer("RS384"); // RS384 is not in the default list
    const r = await startA2AServer({ agent: callerAgent, env: { ...rsa.env() } });
    const { error } = await rpc(r).send(sendRequest(userMessage("hi")), bearer(await rsa.token()));
    expectAuthError(error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /RS256, PS256, ES256, ES384, EdDSA/);
    await r.close();
    rsa.remove();
  });

  test("A-30: a valid token without the scope the operator mapped to the RPC is PERMISSION_DENIED / SCOPE_MISSING", async () => {
    const token = await issuer.token({ sub: "alice", scope: "tasks.read" });
    const task = taskOf((await send(bearer(token))).response!);
    const { error } = await rpc(s).cancel({ id: task.id }, bearer(token));
    expectAuthError(error, grpc.status.PERMISSION_DENIED, "SCOPE_MISSING", /CancelTask needs the scope\(s\) tasks\.cancel/);
    const allowed = await issuer.token({ sub: "alice", scope: "tasks.read tasks.cancel" });
    const canceled = await rpc(s).cancel({ id: task.id }, bearer(allowed));
    expectA2AError(canceled.error, grpc.status.FAILED_PRECONDITION, "TASK_NOT_CANCELABLE"); // let in: the task is already completed
  });

  test("A-31: a tenants claim limits the token to its tenants; an empty tenant means the first", async () => {
    const token = await issuer.token({ sub: "carol", tenants: ["acme", "globex"] });
    const first = await send(bearer(token));
    expect(first.error).toBeUndefined();
    const own = JSON.parse(textOf(taskOf(first.response!).status!.message));
    expect(own.tenant).toBe("acme");
    expect((await send(bearer(token), "globex")).error).toBeUndefined();
    const { error } = await send(bearer(token), "initech");
    expectAuthError(error, grpc.status.PERMISSION_DENIED, "TENANT_NOT_ALLOWED", /acme, globex/);
  });

  test("A-15: the version is checked before identity: no a2a-version and no token is VERSION_NOT_SUPPORTED", async () => {
    const { error } = await rpc(s).send(sendRequest(userMessage("hi")), new grpc.Metadata());
    expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
  });

  test("A-15: identity is checked before validation: a bad request without a token is UNAUTHENTICATED", async () => {
    const { error } = await rpc(s).send(sendRequest(undefined), withAuth({}));
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  test("R-SEC-6: tokens never reach the log", async () => {
    const token = await issuer.token({ sub: "frank" });
    await send(bearer(token));
    await send(withAuth({ authorization: `Bearer ${token}x` }));
    expect(JSON.stringify(s.lines)).not.toContain(token.slice(20));
    expect(s.lines.filter((l) => l["principal"] === `jwt:${ISSUER}#frank`).map((l) => l["method"])).toEqual(["SendMessage"]);
  });
});

describe("JWKS (A-30)", () => {
  test("A-30: keys come from a JWKS URL, fetched once and reused; a rotated-in key is fetched for its kid", async () => {
    const first = await makeIssuer("ES256");
    const second = await makeIssuer("EdDSA");
    const jwks = await startJwksServer([first]);
    const r = await startA2AServer({
      agent: callerAgent,
      env: { A2A_AUTH: "jwt", A2A_JWT_JWKS_URL: jwks.url, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE },
    });
    try {
      for (const sub of ["a", "b", "c"]) expect((await rpc(r).send(sendRequest(userMessage("hi")), bearer(await first.token({ sub })))).error).toBeUndefined();
      expect(jwks.fetches()).toBe(1);
      const unknown = await rpc(r).send(sendRequest(userMessage("hi")), bearer(await second.token()));
      expectAuthError(unknown.error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /no signing key/);
      jwks.setIssuers([first, second]);
      // jose refetches for an unknown kid after its 30 s cooldown; a new server (cold cache) sees the new key at once.
      const r2 = await startA2AServer({
        agent: callerAgent,
        env: { A2A_AUTH: "jwt", A2A_JWT_JWKS_URL: jwks.url, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE },
      });
      expect((await rpc(r2).send(sendRequest(userMessage("hi")), bearer(await second.token()))).error).toBeUndefined();
      await r2.close();
    } finally {
      await r.close();
      await jwks.close();
      first.remove();
      second.remove();
    }
  });

  test("A-30: an unreachable JWKS is UNAVAILABLE (not the caller's fault), within the fetch timeout", async () => {
    const dead = await startJwksServer([]);
    const url = dead.url;
    await dead.close(); // nothing listens there any more (loopback)
    const r = await startA2AServer({
      agent: callerAgent,
      env: { A2A_AUTH: "jwt", A2A_JWT_JWKS_URL: url, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, A2A_JWT_JWKS_TIMEOUT_MS: "500" },
    });
    const { error } = await rpc(r).send(sendRequest(userMessage("hi")), bearer(await issuer.token()));
    expectAuthError(error, grpc.status.UNAVAILABLE, "SIGNING_KEYS_UNAVAILABLE", /signing keys/);
    await r.close();
  });
});
