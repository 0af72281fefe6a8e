/**
 * Issue 33 finding 5 (A-29): webhooks are signed with Ed25519 by default (Standard Webhooks `v1a`
 * over `id.timestamp.body`); receivers verify with the server's public key, which the server
 * publishes in its card (push-signature extension), through `a2a push public-key` and
 * `a2a-grpc-server push public-key`, and no receiver can forge. HMAC (`v1`) stays an option with
 * one secret per tenant, derived from A2A_PUSH_SIGNING_SECRET. Real server, real receivers on
 * loopback, real SQLite for the kept key.
 */
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, verify, type KeyObject } from "node:crypto";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { dispatchAgent, sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { loadConfig, ConfigError } from "../../src/config/index.js";
import { PUSH_SIGNATURE_EXTENSION } from "../../src/push/index.js";
import { runPushCommand } from "../../src/commands/push-command.js";
import { a2a } from "../cli/cli-helpers.js";
import { loopbackResolver, pushConfig } from "./push-helpers.js";
import { startReceiver, type Received, type Receiver } from "./receiver.js";

const agents = dispatchAgent();
const STEPS = agents.on(async (ctx) => {
  await ctx.working("starting");
  await ctx.complete("done");
});

const PUSH_ENV = { A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true", A2A_PUSH_MAX_ATTEMPTS: "1" };
const open: Array<A2ATestServer | Receiver> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function server(env: Record<string, string> = {}): Promise<A2ATestServer> {
  const s = await startA2AServer({ agent: agents.agent, env: { ...PUSH_ENV, ...env }, pushResolver: loopbackResolver() });
  open.push(s);
  return s;
}
async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  open.push(r);
  return r;
}
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "a2a-push-signing-"));
  dirs.push(d);
  return d;
}

/** The push-signature extension's params of the server's card. */
function published(s: A2ATestServer): Record<string, unknown> {
  const ext = s.app.card.capabilities?.extensions.find((e) => e.uri === PUSH_SIGNATURE_EXTENSION);
  return ext?.params as Record<string, unknown>;
}

/** A receiver's verification, as Standard Webhooks has it: v1a, Ed25519 over id.timestamp.body with the whpk_ key. */
function verifiesWith(whpk: string, req: Pick<Received, "headers" | "body">): boolean {
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(whpk.slice(5), "base64").toString("base64url") }, format: "jwk" });
  const signed = Buffer.from(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`);
  return String(req.headers["webhook-signature"] ?? "")
    .split(" ")
    .some((s) => s.startsWith("v1a,") && verify(null, signed, key, Buffer.from(s.slice(4), "base64")));
}

/** v1 HMAC-SHA256 with `secret` (a whsec_ value). */
function hmacVerifies(secret: string, req: Pick<Received, "headers" | "body">): boolean {
  const key = Buffer.from(secret.slice(6), "base64");
  const expected = `v1,${createHmac("sha256", key).update(`${req.headers["webhook-id"]}.${req.headers["webhook-timestamp"]}.${req.body}`).digest("base64")}`;
  return String(req.headers["webhook-signature"] ?? "")
    .split(" ")
    .includes(expected);
}

function run(argv: string[], env: NodeJS.ProcessEnv): { code: number; out: string; err: string } {
  let out = "";
  let err = "";
  const code = runPushCommand(
    argv,
    env,
    (t) => (out += t),
    (t) => (err += t),
  );
  return { code, out, err };
}

const paramOf = (p: Record<string, unknown> | undefined, k: string) => p?.[k] as string | undefined;

describe("issue 33 finding 5: Ed25519 by default", () => {
  test("A-29: every webhook carries v1a, verified with the public key the card publishes; a forged body does not verify", async () => {
    const s = await server();
    const r = await receiver();
    const params = published(s);
    const whpk = paramOf(params, "public_key")!;
    expect(whpk).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(paramOf(params, "scheme")).toBe("v1a");
    await sendForTask(s, userMessage(STEPS), { taskPushNotificationConfig: pushConfig({ url: r.url("/ed"), token: "tk" }) });
    const got = await r.waitFor(3);
    for (const req of got) {
      expect(req.headers["webhook-signature"]).toMatch(/^v1a,/);
      expect(verifiesWith(whpk, req)).toBe(true);
      expect(verifiesWith(whpk, { headers: req.headers, body: `${req.body} ` })).toBe(false);
      expect(verifiesWith(whpk, { headers: { ...req.headers, "webhook-id": "msg_forged" }, body: req.body })).toBe(false);
    }
    // The PEM form is the same key.
    const pem = createPublicKey(paramOf(params, "public_key_pem")!).export({ format: "jwk" }) as { x: string };
    expect(`whpk_${Buffer.from(pem.x, "base64url").toString("base64")}`).toBe(whpk);
  });

  test("a receiver's key is of no use for signing: another server (another key) fails verification", async () => {
    const a = await server();
    const b = await server();
    const r = await receiver();
    await sendForTask(b, userMessage(STEPS), { taskPushNotificationConfig: pushConfig({ url: r.url("/b") }) });
    const [req] = await r.waitFor(1);
    expect(verifiesWith(paramOf(published(b), "public_key")!, req!)).toBe(true);
    expect(verifiesWith(paramOf(published(a), "public_key")!, req!)).toBe(false);
  });

  test("`a2a push public-key` prints the key from the card listener (--human: the whpk_ line; --pem: the PEM)", async () => {
    const s = await server({ A2A_CARD_LISTEN: "127.0.0.1:0" });
    const card = `http://127.0.0.1:${s.app.cardPort}`;
    const whpk = paramOf(published(s), "public_key")!;
    const piped = await a2a(["push", "public-key", "--card", card]); // piped: JSON, as every command
    expect({ code: piped.code, key: piped.json().public_key }).toEqual({ code: 0, key: whpk });
    const plain = await a2a(["push", "public-key", "--card", card, "--human"]);
    expect({ code: plain.code, out: plain.stdout.trim() }).toEqual({ code: 0, out: whpk });
    const pem = await a2a(["push", "public-key", "--card", card, "--human", "--pem"]);
    expect(pem.stdout).toContain("-----BEGIN PUBLIC KEY-----");
  });

  test("SQLite: the key is made on first start in the data directory (file 0600), kept across restarts, and printed by a2a-grpc-server push public-key", async () => {
    const dir = join(tempDir(), "data");
    const env = { A2A_STORE: "sqlite", A2A_DATA_DIR: dir };
    const first = paramOf(published(await server(env)), "public_key");
    const file = join(dir, "push-signing-key.pem");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    for (const x of open.splice(0).reverse()) await x.close();
    expect(paramOf(published(await server(env)), "public_key")).toBe(first);
    const printed = run(["public-key"], { ...env });
    expect(printed.code).toBe(0);
    expect(printed.out.split("\n")[0]).toBe(first);
  });

  test("A2A_PUSH_SIGNING_KEY_FILE: the operator's PEM key signs; a key file that is not Ed25519 stops start-up naming the setting, without its content", async () => {
    const dir = tempDir();
    const { privateKey } = generateKeyPairSync("ed25519");
    const file = join(dir, "key.pem");
    writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    const s = await server({ A2A_PUSH_SIGNING_KEY_FILE: file });
    const jwk = (privateKey as KeyObject).export({ format: "jwk" }) as { x: string };
    expect(paramOf(published(s), "public_key")).toBe(`whpk_${Buffer.from(jwk.x, "base64url").toString("base64")}`);
    const rsa = join(dir, "rsa.pem");
    writeFileSync(rsa, generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }));
    const load = (f: string) => () => loadConfig({ argv: [], env: { A2A_PUSH_SIGNING_KEY_FILE: f } });
    expect(load(rsa)).toThrow(ConfigError);
    expect(load(rsa)).toThrow(/A2A_PUSH_SIGNING_KEY_FILE.*expected Ed25519/);
    const garbage = join(dir, "garbage.pem");
    writeFileSync(garbage, "not-a-key-SECRETMATERIAL");
    expect(load(garbage)).toThrow(/holds no PEM private key/);
    expect(load(garbage)).not.toThrow(/SECRETMATERIAL/);
    expect(createPrivateKey(privateKey.export({ type: "pkcs8", format: "pem" })).asymmetricKeyType).toBe("ed25519");
  });
});

describe("issue 33 finding 5: HMAC, one secret per tenant", () => {
  const ROOT = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;

  test("A-29: each tenant's webhooks verify with its own secret only; no tenant's secret, nor the root, signs for another", async () => {
    const s = await server({ A2A_PUSH_SIGNING: "hmac", A2A_PUSH_SIGNING_SECRET: ROOT });
    expect(published(s)).toBeDefined(); // v1 declared, no public key
    expect(paramOf(published(s), "public_key")).toBeUndefined();
    const r = await receiver();
    await sendForTask(s, userMessage(STEPS), { taskPushNotificationConfig: pushConfig({ url: r.url("/acme"), tenant: "acme" }) }, "acme");
    await sendForTask(s, userMessage(STEPS), { taskPushNotificationConfig: pushConfig({ url: r.url("/globex"), tenant: "globex" }) }, "globex");
    const got = await r.waitFor(6);
    const acmeSecret = run(["tenant-secret", "--tenant=acme"], { A2A_PUSH_SIGNING_SECRET: ROOT }).out.trim();
    const globexSecret = run(["tenant-secret", "--tenant=globex"], { A2A_PUSH_SIGNING_SECRET: ROOT }).out.trim();
    expect(acmeSecret).toMatch(/^whsec_/);
    expect(acmeSecret).not.toBe(globexSecret);
    for (const req of got) {
      expect(req.headers["webhook-signature"]).toMatch(/^v1,/);
      const mine = req.path === "/acme" ? acmeSecret : globexSecret;
      const theirs = req.path === "/acme" ? globexSecret : acmeSecret;
      expect(hmacVerifies(mine, req)).toBe(true);
      expect(hmacVerifies(theirs, req)).toBe(false);
      expect(hmacVerifies(ROOT, req)).toBe(false);
    }
  });

  test("the secret alone selects HMAC; hmac without it, or a malformed one, is refused without echoing it", () => {
    expect(loadConfig({ argv: [], env: { A2A_PUSH_SIGNING_SECRET: ROOT } }).push.signing).toBe("hmac");
    expect(loadConfig({ argv: [], env: {} }).push.signing).toBe("ed25519");
    expect(() => loadConfig({ argv: [], env: { A2A_PUSH_SIGNING: "hmac" } })).toThrow(/needs A2A_PUSH_SIGNING_SECRET/);
    const bad = run(["tenant-secret", "--tenant=acme"], { A2A_PUSH_SIGNING_SECRET: "whsec_TOPSECRETbutshort" });
    expect(bad.code).toBe(2);
    expect(bad.err).not.toContain("TOPSECRET");
    expect(run(["tenant-secret"], { A2A_PUSH_SIGNING_SECRET: ROOT }).code).toBe(2);
  });

  test("A2A_PUSH_SIGNING=off: no webhook-signature", async () => {
    const s = await server({ A2A_PUSH_SIGNING: "off" });
    const r = await receiver();
    await sendForTask(s, userMessage(STEPS), { taskPushNotificationConfig: pushConfig({ url: r.url("/off") }) });
    const [req] = await r.waitFor(1);
    expect(req!.headers["webhook-signature"]).toBeUndefined();
    expect(published(s)).toBeUndefined();
  });
});
