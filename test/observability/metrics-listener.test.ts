import { createApp, type A2AApp } from "../../src/app.js";
import { loadConfig, PRIVATE_METRICS_LISTEN } from "../../src/config/load-config.js";
import { captureLogger } from "../foundation/helpers.js";

/**
 * Issue 33 finding 13 on a real app: the agent card is public by design, metrics are not. With a
 * card listener reachable beyond loopback, the card port answers /metrics with 404 and the metrics
 * are on their own loopback listener; a loopback-only server keeps them beside the card.
 * (Binding 0.0.0.0 is fine here: every request goes to 127.0.0.1.)
 */
let app: A2AApp | undefined;
afterEach(async () => {
  await app?.close(0);
  app = undefined;
});

async function startApp(env: Record<string, string>): Promise<{ app: A2AApp; metricsListen: string | null }> {
  const config = loadConfig({ argv: [], env: { A2A_STORE: "memory", ...env } });
  // The loader's choice, then port 0 in place of the fixed 9464 so that parallel tests never clash.
  const metricsListen = config.metricsListen === PRIVATE_METRICS_LISTEN ? "127.0.0.1:0" : config.metricsListen;
  const started = await createApp({ ...config, metricsListen }, captureLogger("silent").logger);
  return { app: started, metricsListen: config.metricsListen };
}

const get = async (port: number | undefined, path: string) => {
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: r.status, body: await r.text() };
};

test("ISSUE33-13: a card listener beyond loopback serves the card but not /metrics; the metrics have their own loopback listener", async () => {
  const started = await startApp({ A2A_LISTEN: "0.0.0.0:50051", A2A_AUTH: "none", A2A_CARD_LISTEN: "0.0.0.0:0" });
  app = started.app;
  expect(started.metricsListen).toBe("127.0.0.1:9464");
  expect(app.metricsPort).not.toBe(app.cardPort);
  expect((await get(app.cardPort, "/.well-known/agent-card.json")).status).toBe(200);
  expect((await get(app.cardPort, "/metrics")).status).toBe(404);
  const metrics = await get(app.metricsPort, "/metrics");
  expect(metrics.status).toBe(200);
  expect(metrics.body).toMatch(/^# HELP /m);
});

test("ISSUE33-13: a loopback-only server keeps /metrics beside the card, as before", async () => {
  const started = await startApp({ A2A_LISTEN: "127.0.0.1:50051", A2A_CARD_LISTEN: "127.0.0.1:0" });
  app = started.app;
  expect(started.metricsListen).toBe("card");
  expect(app.metricsPort).toBe(app.cardPort);
  expect((await get(app.cardPort, "/metrics")).status).toBe(200);
});
