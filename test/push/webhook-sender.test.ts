import { afterEach, expect, test } from "@jest/globals";
import { DestinationGuard } from "../../src/push/destination-guard.js";
import { WebhookSender } from "../../src/push/webhook-sender.js";
import { startReceiver, type Receiver } from "./receiver.js";

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

async function setUp(timeoutMs: number, answerDelayMs: (n: number) => number): Promise<{ receiver: Receiver; sender: WebhookSender }> {
  const receiver = await startReceiver({ answer: (_r, n) => ({ status: 200, delayMs: answerDelayMs(n) }) });
  const sender = new WebhookSender({ guard: new DestinationGuard({ allowHosts: ["127.0.0.1"], allowHttp: true }), timeoutMs });
  opened.push(receiver, sender);
  return { receiver, sender };
}

const request = (receiver: Receiver, n: number) => ({
  url: receiver.url(`/hook/${n}`),
  headers: { "content-type": "application/a2a+json" },
  body: `{"n":${n}}`,
});

test("A-12, R-PUSHD-6: a request without an answer ends as failed after the per-request timeout; later requests are answered", async () => {
  const { receiver, sender } = await setUp(300, (n) => (n === 0 ? 5_000 : 0));
  const startedAt = Date.now();
  const first = await sender.send(request(receiver, 0));
  const tookMs = Date.now() - startedAt;
  expect(first).toEqual({ kind: "failed", reason: "no answer within 300 ms" });
  expect(tookMs).toBeGreaterThanOrEqual(290);
  expect(tookMs).toBeLessThan(4_000); // the timeout, not the receiver's 5 s
  expect(await sender.send(request(receiver, 1))).toEqual({ kind: "answered", status: 200, retryAfter: undefined });
});

test("A-12: each request of a burst gets its own deadline: slow ones time out, the quick ones in the same burst are answered", async () => {
  const { receiver, sender } = await setUp(400, (n) => (n % 2 === 0 ? 5_000 : 0));
  const results = await Promise.all(Array.from({ length: 6 }, (_, n) => sender.send(request(receiver, n))));
  const answered = results.filter((r) => r.kind === "answered").length;
  const timedOut = results.filter((r) => r.kind === "failed" && r.reason === "no answer within 400 ms").length;
  expect(answered + timedOut).toBe(6);
  expect(answered).toBe(3); // the receiver's odd requests (arrival order may differ from send order: counted, not matched)
  expect(timedOut).toBe(3);
});
