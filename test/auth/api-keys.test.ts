/**
 * API keys: a file of hashed keys with principal, tenants and scopes per key, reloaded on
 * SIGHUP (a bad file keeps the keys in force); unknown keys are UNAUTHENTICATED; the card
 * declares the scheme it enforces.
 */
import * as grpc from "@grpc/grpc-js";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { rpc, scriptedAgent, sendRequest, taskOf, textOf, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { expectAuthError, withAuth } from "./auth-support.js";

const agent = scriptedAgent(async (ctx) => {
  await ctx.working();
  await ctx.complete(`${ctx.caller.principal}@${ctx.caller.tenant}:${(ctx.caller.scopes ?? []).join(" ")}`);
});
const alice = newApiKey();
const bob = newApiKey();
let dir: string;
let file: string;
let s: A2ATestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-keys-"));
  file = join(dir, "keys");
  writeFileSync(file, `# operators' keys\n${apiKeyLine(alice, { principal: "alice", tenants: ["acme"], scopes: ["tasks.write"] })}\n`);
  s = await startA2AServer({ agent, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: file, A2A_AUTH_SCOPES: "SendMessage=tasks.write" } });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const send = (key: string, tenant = "") => rpc(s).send(sendRequest(userMessage("hi"), undefined, tenant), withAuth({ "x-api-key": key }));

describe("API keys (A-30)", () => {
  test("A-30: a listed key lets its principal in, in its tenant, with its scopes", async () => {
    const { response, error } = await send(alice);
    expect(error).toBeUndefined();
    expect(textOf(taskOf(response!).status!.message)).toBe("apikey:alice@acme:tasks.write"); // the owner names its scheme
  });

  test("A-30: an unknown key is UNAUTHENTICATED, naming the x-api-key scheme", async () => {
    expectAuthError((await send(newApiKey())).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_INVALID", /x-api-key: <key>/);
    expectAuthError((await rpc(s).send(sendRequest(userMessage("hi")), withAuth({}))).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_MISSING", /x-api-key/);
  });

  test("A-31: a key limited to tenants may not act in another", async () => {
    expectAuthError((await send(alice, "globex")).error, grpc.status.PERMISSION_DENIED, "TENANT_NOT_ALLOWED", /acme/);
  });

  test("A-30: SIGHUP reloads the key file; a file that does not parse keeps the keys in force", async () => {
    expect((await send(bob)).error?.code).toBe(grpc.status.UNAUTHENTICATED);
    appendFileSync(file, `${apiKeyLine(bob, { principal: "bob", tenants: undefined, scopes: [] })}\n`);
    process.emit("SIGHUP", "SIGHUP");
    // bob is in, but SendMessage needs tasks.write, which his key lacks.
    expectAuthError((await send(bob)).error, grpc.status.PERMISSION_DENIED, "SCOPE_MISSING", /SendMessage needs the scope\(s\) tasks\.write/);
    appendFileSync(file, "this is not a key line\n");
    process.emit("SIGHUP", "SIGHUP");
    expect(s.lines.some((l) => String(l["msg"]).includes("could not reload the API key file"))).toBe(true);
    expect((await send(alice)).error).toBeUndefined();
    expect(JSON.stringify(s.lines)).not.toContain(alice);
  });

  test("A-30 R-CARD-8: the card declares the API key scheme it enforces, with the default scopes", () => {
    expect(s.app.card.securitySchemes["apiKey"]?.scheme).toMatchObject({ case: "apiKeySecurityScheme", value: { location: "header", name: "x-api-key" } });
    expect(s.app.card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual([["apiKey"]]);
  });
});
