/**
 * The credential watch behind ending streams (issue 33 finding 7), alone: an API key's many open
 * streams all end on its revocation (a reload that keeps the key ends none), an anonymous caller
 * is never ended, and an expiry already past ends at once.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, CallerAuthenticator, newApiKey } from "../../src/auth/index.js";
import { ApiKeyAuthenticator } from "../../src/auth/api-key-authenticator.js";
import { watchCredential } from "../../src/auth/credential-watch.js";
import { RpcScopes } from "../../src/auth/rpc-scopes.js";
import type { AuthError } from "../../src/auth/auth-error.js";

test("A-30: 50 streams of one API key all end when a reload removes it, and none when a reload keeps it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-watch-"));
  try {
    const key = newApiKey();
    const file = join(dir, "keys");
    writeFileSync(file, `${apiKeyLine(key, { principal: "alice", tenants: undefined, scopes: [] })}\n`);
    const keys = new ApiKeyAuthenticator(file);
    const callers = new CallerAuthenticator({ authenticators: [keys], rpcScopes: RpcScopes.NONE });
    const metadata = new grpc.Metadata();
    metadata.set("x-api-key", key);
    const caller = await callers.authenticate({ metadata }, "SubscribeToTask", "");
    const ends: AuthError[] = [];
    for (let i = 0; i < 50; i++) watchCredential(caller, (e) => ends.push(e));
    expect(keys.reload()).toBe(1); // the same file: nothing revoked
    expect(ends).toHaveLength(0);
    writeFileSync(file, "# no keys\n");
    expect(keys.reload()).toBe(0);
    expect(ends.map((e) => e.reason)).toEqual(Array(50).fill("CREDENTIALS_REVOKED"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("A-30: an anonymous caller is never ended; a credential already expired ends at once", () => {
  const ends: string[] = [];
  watchCredential({ tenant: "", principal: "anonymous" }, (e) => ends.push(e.reason))();
  expect(ends).toEqual([]);
  const expired = { tenant: "", principal: "jwt:x#a", scheme: "jwt", credential: { expiresAtMs: 1_000 } };
  watchCredential(
    expired,
    (e) => ends.push(e.reason),
    () => 2_000,
  );
  expect(ends).toEqual(["CREDENTIALS_EXPIRED"]);
});
