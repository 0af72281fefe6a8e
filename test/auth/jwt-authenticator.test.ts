/** The JWT authenticator alone: its token cache (A-30: verified tokens cached until they expire) and its bounds. */
import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { JwtAuthenticator } from "../../src/auth/index.js";
import { AUDIENCE, ISSUER, makeIssuer, type TestIssuer } from "./auth-support.js";

let issuer: TestIssuer;
beforeAll(async () => (issuer = await makeIssuer("ES256")));
afterAll(() => issuer.remove());

function jwt(now: () => number, cacheEntries?: number): JwtAuthenticator {
  return new JwtAuthenticator({
    publicKeyPem: readFileSync(issuer.publicKeyFile),
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ["ES256"],
    clockSkewSeconds: 30,
    scopesClaim: "scope",
    jwksTimeoutMs: 1000,
    now,
    cacheEntries,
  });
}
const source = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return { metadata };
};

describe("JWT token cache", () => {
  test("A-30: a verified token is answered from the cache (synchronously) until exp, then verified again", async () => {
    let now = Date.now();
    const auth = jwt(() => now);
    const exp = Math.floor(now / 1000) + 60;
    const token = await issuer.token({ sub: "alice" }, { expiresIn: exp });
    const first = auth.authenticate(source(token));
    expect(first).toBeInstanceOf(Promise);
    expect((await first)!.principal).toBe("alice");
    const again = auth.authenticate(source(token));
    expect(again).not.toBeInstanceOf(Promise);
    expect((again as { principal: string }).principal).toBe("alice");
    now = exp * 1000 + 31_000; // past exp and the skew
    const late = auth.authenticate(source(token));
    expect(late).toBeInstanceOf(Promise);
    await expect(late).rejects.toThrow(/expired/);
    expect(auth.cachedTokens).toBe(0);
  });

  test("A-30: the cache is bounded: the oldest token goes when it is full", async () => {
    const auth = jwt(Date.now, 3);
    const tokens = await Promise.all(["a", "b", "c", "d", "e"].map((sub) => issuer.token({ sub })));
    for (const token of tokens) await auth.authenticate(source(token));
    expect(auth.cachedTokens).toBe(3);
    expect(auth.authenticate(source(tokens[0]!))).toBeInstanceOf(Promise); // pushed out
    expect(auth.authenticate(source(tokens[4]!))).not.toBeInstanceOf(Promise);
  });

  test("A-30: a call without an authorization entry is not a JWT call (the next scheme is tried)", () => {
    expect(jwt(Date.now).authenticate({ metadata: new grpc.Metadata() })).toBeUndefined();
  });
});
