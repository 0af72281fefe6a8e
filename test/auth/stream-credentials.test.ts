/**
 * Streams outlive their credentials no more (issue 33 finding 7), through real grpc-js clients:
 * an open SendStreamingMessage or SubscribeToTask ends with UNAUTHENTICATED at its JWT's exp,
 * and when its API key leaves the key file on a reload (SIGHUP); other callers' streams go on.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { rpc, scriptedAgent, sendRequest, taskOf, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { bearer, expectAuthError, makeIssuer, withAuth, type TestIssuer } from "./auth-support.js";
import { streamSend, subscribe, type readStream, type StreamResult } from "./stream-support.js";

/** Works until the server stops it: its streams stay open as long as the server lets them. */
const agent = scriptedAgent(async (ctx) => {
  await ctx.working();
  await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
});
const keys = { alice: newApiKey(), bob: newApiKey() };
let dir: string;
let keyFile: string;
let issuer: TestIssuer;
let s: A2ATestServer;

const keyLines = (...who: Array<keyof typeof keys>) => `${who.map((w) => apiKeyLine(keys[w], { principal: w, tenants: undefined, scopes: [] })).join("\n")}\n`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-stream-cred-"));
  keyFile = join(dir, "keys");
  writeFileSync(keyFile, keyLines("alice", "bob"));
  issuer = await makeIssuer("ES256");
  s = await startA2AServer({ agent, env: issuer.env({ A2A_AUTH: "jwt,api-key", A2A_API_KEYS_FILE: keyFile }) });
});
afterAll(async () => {
  await s.close();
  issuer.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** The stream's end, and when it came (ms since the epoch). */
const ended = (stream: { result: Promise<StreamResult> }) => stream.result.then((r) => ({ ...r, at: Date.now() }));
const still = <T>(p: Promise<T>, ms: number) => Promise.race([p.then(() => "ended"), new Promise((r) => setTimeout(() => r("open"), ms))]);

describe("issue 33 #7: a stream ends when its credential does", () => {
  test.each([
    ["SendStreamingMessage", false],
    ["SubscribeToTask", true],
  ])("A-30: %s ends with UNAUTHENTICATED / CREDENTIALS_EXPIRED at its JWT's exp, not before", async (_rpc, viaSubscribe) => {
    const exp = Math.floor(Date.now() / 1000) + 3;
    const short = bearer(await issuer.token({ sub: "erin" }, { expiresIn: exp }));
    let stream: ReturnType<typeof readStream>;
    if (viaSubscribe) {
      // The task is made with a long-lived token of the same subject: the same owner.
      const made = await rpc(s).send(sendRequest(userMessage("hold"), { returnImmediately: true }), bearer(await issuer.token({ sub: "erin" })));
      stream = subscribe(s.client, taskOf(made.response!).id, short);
    } else {
      stream = streamSend(s.client, sendRequest(userMessage("hold")), short);
    }
    const end = await ended(stream);
    expect(end.events.length).toBeGreaterThan(0); // it was open and delivering
    expectAuthError(end.error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_EXPIRED", /expired/);
    expect(end.at).toBeGreaterThanOrEqual(exp * 1000 - 50);
    expect(end.at).toBeLessThan(exp * 1000 + 2000);
  });

  test("A-30: removing an API key on reload (SIGHUP) ends its streams with UNAUTHENTICATED / CREDENTIALS_REVOKED; other keys' streams go on", async () => {
    const bobStream = streamSend(s.client, sendRequest(userMessage("hold")), withAuth({ "x-api-key": keys.bob }));
    const aliceTask = await rpc(s).send(sendRequest(userMessage("hold"), { returnImmediately: true }), withAuth({ "x-api-key": keys.alice }));
    const aliceStream = subscribe(s.client, taskOf(aliceTask.response!).id, withAuth({ "x-api-key": keys.alice }));
    const bobEnd = ended(bobStream);
    expect(await still(bobEnd, 300)).toBe("open");
    writeFileSync(keyFile, keyLines("alice"));
    process.emit("SIGHUP", "SIGHUP");
    const end = await bobEnd;
    expect(end.events.length).toBeGreaterThan(0);
    expectAuthError(end.error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_REVOKED", /withdrawn/);
    expect(await still(aliceStream.result, 300)).toBe("open");
    expect(aliceStream.events.length).toBeGreaterThan(0);
    aliceStream.cancel();
    writeFileSync(keyFile, keyLines("alice", "bob"));
    process.emit("SIGHUP", "SIGHUP");
  });

  test("A-30: a key file that does not parse still revokes the keys it no longer lists, and keeps the others", async () => {
    const bobStream = streamSend(s.client, sendRequest(userMessage("hold")), withAuth({ "x-api-key": keys.bob }));
    const aliceStream = streamSend(s.client, sendRequest(userMessage("hold")), withAuth({ "x-api-key": keys.alice }));
    const bobEnd = ended(bobStream);
    expect(await still(bobEnd, 300)).toBe("open");
    writeFileSync(keyFile, `${keyLines("alice")}sha256:not-hex principal=typo\n`);
    process.emit("SIGHUP", "SIGHUP");
    expectAuthError((await bobEnd).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_REVOKED", /withdrawn/);
    expect(await still(aliceStream.result, 300)).toBe("open");
    expect((await rpc(s).send(sendRequest(userMessage("hold"), { returnImmediately: true }), withAuth({ "x-api-key": keys.alice }))).error).toBeUndefined();
    expect((await rpc(s).send(sendRequest(userMessage("hold"), { returnImmediately: true }), withAuth({ "x-api-key": keys.bob }))).error?.code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    aliceStream.cancel();
    writeFileSync(keyFile, keyLines("alice", "bob"));
    process.emit("SIGHUP", "SIGHUP");
  });
});
