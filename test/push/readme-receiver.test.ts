/**
 * The README's receiver (examples/push-receiver.mjs) run as it is documented, against the real
 * server on loopback: it verifies our Standard Webhooks signature, Ed25519 with the published
 * key (the default) or HMAC with its tenant's secret, and refuses a forged one.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { PUSH_SIGNATURE_EXTENSION } from "../../src/push/index.js";
import { formatSigningSecret, tenantSigningSecret } from "../../src/push/signature.js";
import { dispatchAgent, sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { loopbackResolver, pushConfig } from "./push-helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SECRET = `whsec_${Buffer.alloc(32, 3).toString("base64")}`;

async function runReceiver(env: Record<string, string>) {
  const receiver = spawn(process.execPath, ["examples/push-receiver.mjs"], { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: "", PORT: "0", ...env } });
  const out: string[] = [];
  receiver.stdout.setEncoding("utf8").on("data", (c: string) => out.push(...c.split("\n").filter(Boolean)));
  const [banner] = (await once(receiver.stderr.setEncoding("utf8"), "data")) as [string];
  return { receiver, out, port: Number(/:(\d+)/.exec(banner)![1]) };
}

/** Runs one task whose webhooks go to the receiver; checks it printed them all, and refused a forged one. */
async function deliversAndRefusesForged(serverEnv: Record<string, string>, receiverEnv: (s: A2ATestServer) => Record<string, string>, forged: string) {
  const agents = dispatchAgent();
  const STEPS = agents.on(async (ctx) => {
    await ctx.working();
    await ctx.complete("done");
  });
  const s = await startA2AServer({
    agent: agents.agent,
    env: { A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true", A2A_PUSH_MAX_ATTEMPTS: "1", ...serverEnv },
    pushResolver: loopbackResolver(),
  });
  const { receiver, out, port } = await runReceiver(receiverEnv(s));
  try {
    await sendForTask(s, userMessage(STEPS), { taskPushNotificationConfig: pushConfig({ url: `http://127.0.0.1:${port}/hook`, token: "tk" }) });
    for (let i = 0; i < 100 && out.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
    const events = out.map((l) => JSON.parse(l) as { token: string; event: Record<string, unknown> });
    expect(events.map((e) => Object.keys(e.event)[0])).toEqual(["task", "statusUpdate", "statusUpdate"]);
    expect(events.every((e) => e.token === "tk")).toBe(true);
    expect(s.app.push!.service.stats()).toMatchObject({ gaveUp: 0 });
    const refused = await fetch(`http://127.0.0.1:${port}/hook`, {
      method: "POST",
      headers: { "webhook-id": "msg_x", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": forged },
      body: "{}",
    });
    expect(refused.status).toBe(401);
  } finally {
    await s.close();
    receiver.kill();
  }
}

test("A-29 / issue 33 finding 5: the README receiver verifies every webhook with the server's published Ed25519 key and refuses a forged signature", async () => {
  const publicKey = (s: A2ATestServer) => {
    const ext = s.app.card.capabilities?.extensions.find((e) => e.uri === PUSH_SIGNATURE_EXTENSION);
    return { A2A_PUSH_PUBLIC_KEY: String(ext?.params?.public_key) };
  };
  await deliversAndRefusesForged({}, publicKey, `v1a,${Buffer.alloc(64, 1).toString("base64")}`);
});

test("A-29: the README receiver, given its tenant's HMAC secret, verifies every webhook and refuses a forged signature", async () => {
  const tenantSecret = formatSigningSecret(tenantSigningSecret(Buffer.from(SECRET.slice(6), "base64"), ""));
  await deliversAndRefusesForged({ A2A_PUSH_SIGNING_SECRET: SECRET }, () => ({ A2A_PUSH_SIGNING_SECRET: tenantSecret }), "v1,Zm9yZ2Vk");
});
