/**
 * One name, one identity (A-31, issue 33 finding 2): a task's owner names the scheme that proved
 * the caller (and a JWT's issuer), so the API key named `alice` and the JWT subject `alice` are
 * two principals, each blind to the other's tasks; and `anonymous` is reserved for callers while
 * authentication is off: a JWT whose sub is `anonymous`, or a key named so, owns none of their tasks.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey, ownerPrincipal } from "../../src/auth/index.js";
import { expectA2AError, rpc, scriptedAgent, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { bearer, ISSUER, makeIssuer, withAuth, type TestIssuer } from "./auth-support.js";

const keys = { alice: newApiKey(), anonymous: newApiKey() };
const agent = scriptedAgent(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?"); // INPUT_REQUIRED: a task that can still be canceled
});
let dir: string;
let keyFile: string;
let issuer: TestIssuer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-owner-"));
  keyFile = join(dir, "keys");
  writeFileSync(
    keyFile,
    `${apiKeyLine(keys.alice, { principal: "alice", tenants: undefined, scopes: [] })}\n${apiKeyLine(keys.anonymous, { principal: "anonymous", tenants: undefined, scopes: [] })}\n`,
  );
  issuer = await makeIssuer("ES256");
});
afterAll(() => {
  issuer.remove();
  rmSync(dir, { recursive: true, force: true });
});

async function createTask(s: A2ATestServer, md: grpc.Metadata): Promise<string> {
  const { response, error } = await rpc(s).send(sendRequest(userMessage("hi"), { returnImmediately: false }), md);
  expect(error).toBeUndefined();
  return taskOf(response!).id;
}

/** Neither GetTask nor CancelTask nor ListTasks of `md` reaches task `id`: it is TASK_NOT_FOUND, as an unknown id is. */
async function expectBlind(s: A2ATestServer, id: string, md: grpc.Metadata): Promise<void> {
  expectA2AError((await rpc(s).get({ id }, md)).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  expectA2AError((await rpc(s).cancel({ id }, md)).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  expect((await rpc(s).list({}, md)).response!.tasks.map((t) => t.id)).not.toContain(id);
}

describe("A-31: the API key alice and the JWT subject alice are two principals", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await startA2AServer({ agent, env: issuer.env({ A2A_AUTH: "jwt,api-key", A2A_API_KEYS_FILE: keyFile }) });
  });
  afterAll(() => s.close());

  test("A-31: the key alice neither sees nor cancels the tasks of JWT subject alice", async () => {
    const jwtAlice = bearer(await issuer.token({ sub: "alice" }));
    const id = await createTask(s, jwtAlice);
    await expectBlind(s, id, withAuth({ "x-api-key": keys.alice }));
    expect((await rpc(s).get({ id }, jwtAlice)).response?.id).toBe(id); // still the owner's
  });

  test("A-31: JWT subject alice neither sees nor cancels the tasks of the key alice", async () => {
    const keyAlice = withAuth({ "x-api-key": keys.alice });
    const id = await createTask(s, keyAlice);
    await expectBlind(s, id, bearer(await issuer.token({ sub: "alice" })));
    expect((await rpc(s).cancel({ id }, keyAlice)).response?.id).toBe(id);
  });

  test("A-31: the same subject from another issuer is another principal (the owner carries iss)", () => {
    const claims = (iss: string) => ({ iss, sub: "alice" });
    expect(ownerPrincipal({ scheme: "jwt", principal: "alice", claims: claims(ISSUER) })).toBe(`jwt:${ISSUER}#alice`);
    expect(ownerPrincipal({ scheme: "jwt", principal: "alice", claims: claims("https://other.test") })).not.toBe(`jwt:${ISSUER}#alice`);
    // An issuer holding "#" cannot pass for a shorter issuer with a longer subject.
    expect(ownerPrincipal({ scheme: "jwt", principal: "c", claims: claims("a#b") })).not.toBe(
      ownerPrincipal({ scheme: "jwt", principal: "b#c", claims: claims("a") }),
    );
    expect(ownerPrincipal({ scheme: "api-key", principal: "alice", claims: {} })).toBe("apikey:alice");
    expect(ownerPrincipal({ scheme: "mtls", principal: "alice", claims: {} })).toBe("mtls:alice");
  });
});

describe("A-31: anonymous is reserved", () => {
  test("A-31: tasks made while authentication was off are not taken over by a JWT with sub anonymous, nor by a key named anonymous", async () => {
    const data = join(dir, "data");
    const store = { A2A_STORE: "sqlite", A2A_DATA_DIR: data };
    const open = await startA2AServer({ agent, env: store });
    const id = await createTask(open, open.metadata());
    await open.close();

    const closed = await startA2AServer({ agent, env: issuer.env({ ...store, A2A_AUTH: "jwt,api-key", A2A_API_KEYS_FILE: keyFile }) });
    try {
      await expectBlind(closed, id, bearer(await issuer.token({ sub: "anonymous" })));
      await expectBlind(closed, id, withAuth({ "x-api-key": keys.anonymous }));
    } finally {
      await closed.close();
    }
    // The task is still there, and still the anonymous callers' own.
    const again = await startA2AServer({ agent, env: store });
    try {
      expect((await rpc(again).get({ id })).response?.id).toBe(id);
    } finally {
      await again.close();
    }
  });
});
