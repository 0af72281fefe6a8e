/**
 * A cached token does not outlive its key (issue 33 finding 3): the verified-token cache trusts a
 * token for minutes, not until its exp; it is emptied when the issuer's JWKS (served for real on
 * loopback) comes back without a key, and when the PEM key file changes (SIGHUP); and tokens that
 * claim a longer life than A2A_JWT_MAX_TOKEN_LIFETIME (default 24h) are refused outright.
 */
import * as grpc from "@grpc/grpc-js";
import { readFileSync, writeFileSync } from "node:fs";
import { JwtAuthenticator } from "../../src/auth/index.js";
import { loadConfig } from "../../src/config/index.js";
import { rpc, scriptedAgent, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer } from "../support/a2a-server.js";
import { AUDIENCE, bearer, expectAuthError, ISSUER, makeIssuer, startJwksServer, type TestIssuer } from "./auth-support.js";

let issuers: TestIssuer[];
beforeAll(async () => (issuers = await Promise.all([makeIssuer("ES256"), makeIssuer("ES256")])));
afterAll(() => issuers.forEach((i) => i.remove()));

const base = { issuer: ISSUER, audience: AUDIENCE, algorithms: ["ES256"], clockSkewSeconds: 30, scopesClaim: "scope", jwksTimeoutMs: 2000 };
const source = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return { metadata };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowS = () => Math.floor(Date.now() / 1000);

describe("A-30 issue 33 #3: the token cache follows the issuer's keys", () => {
  test("A-30: a token cached before its key left the JWKS is refused once the JWKS is fetched again", async () => {
    const [kept, dropped] = issuers as [TestIssuer, TestIssuer];
    const jwks = await startJwksServer([kept, dropped]);
    try {
      const auth = new JwtAuthenticator({ ...base, jwksUrl: new URL(jwks.url), jwksMaxAgeMs: 200 });
      const doomed = await dropped.token({ sub: "mallory" }, { expiresIn: "1h" });
      expect((await auth.authenticate(source(doomed)))?.principal).toBe("mallory");
      expect(auth.authenticate(source(doomed))).not.toBeInstanceOf(Promise); // answered from the cache
      jwks.setIssuers([kept]); // the issuer withdraws the key
      await sleep(300); // the fetched key set is stale now
      expect((await auth.authenticate(source(await kept.token({ sub: "bob" }))))?.principal).toBe("bob"); // fetches the new set
      expect(jwks.fetches()).toBe(2);
      const again = auth.authenticate(source(doomed));
      expect(again).toBeInstanceOf(Promise); // no longer cached
      await expect(again).rejects.toThrow(/no signing key/);
    } finally {
      await jwks.close();
    }
  });

  test("A-30: a verified token is trusted for two minutes at most, whatever its exp", async () => {
    let now = Date.now();
    const auth = new JwtAuthenticator({ ...base, publicKeyPem: readFileSync(issuers[0]!.publicKeyFile), now: () => now });
    const token = await issuers[0]!.token({ sub: "alice" }, { expiresIn: "12h" });
    await auth.authenticate(source(token));
    now += 119_000;
    expect(auth.authenticate(source(token))).not.toBeInstanceOf(Promise);
    expect(auth.verifications).toBe(1);
    now += 2_000;
    expect(auth.authenticate(source(token))).toBeInstanceOf(Promise); // checked again
    expect(auth.verifications).toBe(2);
  });

  test("A-30: SIGHUP reads the JWT public key file again: tokens of the replaced key are refused at once", async () => {
    const [current, next] = issuers as [TestIssuer, TestIssuer];
    const file = `${current.dir}/rotating.pem`;
    writeFileSync(file, current.publicKeyPem);
    const s = await startA2AServer({ env: current.env({ A2A_JWT_PUBLIC_KEY_FILE: file }) });
    try {
      const old = bearer(await current.token({ sub: "alice" }));
      expect((await rpc(s).send(sendRequest(userMessage("hi")), old)).error).toBeUndefined();
      writeFileSync(file, next.publicKeyPem);
      process.emit("SIGHUP", "SIGHUP");
      expectAuthError((await rpc(s).send(sendRequest(userMessage("hi")), old)).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /signature/);
      expect((await rpc(s).send(sendRequest(userMessage("hi")), bearer(await next.token({ sub: "alice" })))).error).toBeUndefined();
    } finally {
      await s.close();
    }
  });
});

describe("A2A_JWT_MAX_TOKEN_LIFETIME (issue 33 #3)", () => {
  const auth = () => new JwtAuthenticator({ ...base, publicKeyPem: readFileSync(issuers[0]!.publicKeyFile), maxTokenLifetimeMs: 24 * 3_600_000 });

  test.each([
    ["exp in the year 9999", { expiresIn: 253_402_300_799 }],
    ["a 48 h token", { expiresIn: "48h" }],
  ])("A-30: %s is refused, naming the longest lifetime accepted", async (_what, options) => {
    const token = await issuers[0]!.token({}, options);
    await expect(auth().authenticate(source(token))).rejects.toThrow(/lifetime .* longer than this server accepts \(86400 s\)/);
  });

  test("A-30: without iat the lifetime counts from now; a 23 h token is accepted", async () => {
    const { SignJWT } = await import("jose");
    const noIat = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: issuers[0]!.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(nowS() + 25 * 3600)
      .sign(issuers[0]!.privateKey);
    await expect(auth().authenticate(source(noIat))).rejects.toThrow(/lifetime/);
    const fine = await issuers[0]!.token({}, { expiresIn: "23h" });
    expect((await auth().authenticate(source(fine)))?.principal).toBe("alice");
  });

  test("A-30: the setting reaches the server: with 1h a 2 h token is UNAUTHENTICATED; the default is 24h; off is refused", async () => {
    const agent = scriptedAgent(async (ctx) => ctx.complete("ok"));
    const s = await startA2AServer({ agent, env: issuers[0]!.env({ A2A_JWT_MAX_TOKEN_LIFETIME: "1h" }) });
    try {
      const long = bearer(await issuers[0]!.token({}, { expiresIn: "2h" }));
      expectAuthError((await rpc(s).send(sendRequest(userMessage("hi")), long)).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /lifetime/);
      expect((await rpc(s).send(sendRequest(userMessage("hi")), bearer(await issuers[0]!.token({}, { expiresIn: "59m" })))).error).toBeUndefined();
    } finally {
      await s.close();
    }
    const env = { A2A_LISTEN: "127.0.0.1:0", A2A_STORE: "memory", ...issuers[0]!.env() };
    expect(loadConfig({ argv: [], env }).auth.jwt?.maxTokenLifetimeMs).toBe(24 * 3_600_000);
    expect(() => loadConfig({ argv: [], env: { ...env, A2A_JWT_MAX_TOKEN_LIFETIME: "off" } })).toThrow(/A2A_JWT_MAX_TOKEN_LIFETIME/);
  });
});
