/**
 * Issue 34 item 4, R-BIND-37: an SSE stream silent for A2A_SSE_KEEPALIVE gets a `: keep-alive`
 * comment line, which SSE clients skip; a stream that talks gets none; off sends none.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { SseWriter } from "../../src/http/sse-writer.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "./jsonrpc-support.js";

const KEEP_ALIVE_MS = 200;

let s: JsonRpcSetup;
beforeAll(async () => {
  s = await startJsonRpcSetup({ A2A_SSE_KEEPALIVE: `${KEEP_ALIVE_MS}ms`, A2A_STREAM_HEARTBEAT: "off" });
});
afterAll(() => s.close());

/** The raw bytes of a stream as they arrive, and what eventsource-parser makes of them. */
class RawSse {
  text = "";
  readonly events: EventSourceMessage[] = [];
  readonly comments: string[] = [];
  readonly #parser = createParser({ onEvent: (e) => this.events.push(e), onComment: (c) => this.comments.push(c) });
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  ended = false;

  constructor(response: Response) {
    if (response.body === null) throw new Error("the response has no body");
    this.#reader = response.body.getReader();
  }

  /** Reads until `done(this)` holds or the stream ends. */
  async readUntil(done: (sse: RawSse) => boolean): Promise<void> {
    while (!done(this) && !this.ended) {
      const { done: finished, value } = await this.#reader.read();
      if (finished) this.ended = true;
      else {
        const chunk = this.#decoder.decode(value, { stream: true });
        this.text += chunk;
        this.#parser.feed(chunk);
      }
    }
  }

  keepAliveLines(): number {
    return this.text.split("\n").filter((line) => line === ": keep-alive").length;
  }
}

function sendStreaming(text: string, messageId: string): Promise<Response> {
  return fetch(s.endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": s.aliceKey, Accept: "text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "k1",
      method: "SendStreamingMessage",
      params: { message: { messageId, role: "ROLE_USER", parts: [{ text }] } },
    }),
  });
}

test("R-BIND-37: a waiting task's SSE stream gets `: keep-alive` comment lines, which eventsource-parser does not hand out as events", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  s.scripts.set("wait", async (ctx) => {
    await ctx.working("waiting");
    await released;
    await ctx.complete("done");
  });
  const started = performance.now();
  const sse = new RawSse(await sendStreaming("wait", "ka-1"));
  await sse.readUntil((x) => x.keepAliveLines() >= 2);
  const waited = performance.now() - started;
  release();
  await sse.readUntil(() => false);

  expect(sse.keepAliveLines()).toBeGreaterThanOrEqual(2);
  // Two comments need at least two silent intervals: the timer does not fire early.
  expect(waited).toBeGreaterThanOrEqual(2 * KEEP_ALIVE_MS - 20);
  expect(sse.text).toMatch(/\n\n: keep-alive\n\n/);
  expect(sse.comments.filter((c) => c.trim() === "keep-alive").length).toBe(sse.keepAliveLines());
  for (const event of sse.events) expect(JSON.parse(event.data)).toEqual(expect.objectContaining({ jsonrpc: "2.0", id: "k1" }));
  const states = sse.events.map((e) => JSON.parse(e.data).result?.statusUpdate?.status?.state ?? Object.keys(JSON.parse(e.data).result)[0]);
  expect(states[0]).toBe("task");
  expect(states.at(-1)).toBe("TASK_STATE_COMPLETED");
}, 10_000);

test("R-BIND-37: every write resets the idle timer: a stream with an event every 10 ms gets no comment", async () => {
  s.scripts.set("chatty", async (ctx) => {
    for (let i = 0; i < 30; i++) {
      await ctx.artifact({ artifactId: "a", parts: [`chunk ${i}`] }, { append: i > 0 });
      await new Promise((r) => setTimeout(r, 10));
    }
    await ctx.complete("done");
  });
  const sse = new RawSse(await sendStreaming("chatty", "ka-2"));
  await sse.readUntil(() => false);
  expect(sse.events.length).toBeGreaterThan(30);
  expect(sse.keepAliveLines()).toBe(0);
});

test("R-BIND-37: off (null) sends no comment; on, a silent stream gets one until it ends", async () => {
  const writers: Array<{ keepAliveMs: number | null; writer?: SseWriter<string> }> = [{ keepAliveMs: null }, { keepAliveMs: 30 }];
  const server: Server = createServer((req, res) => {
    const slot = writers[Number(req.url?.slice(1))]!;
    slot.writer = new SseWriter<string>(res, {}, (data) => ({ data }), { keepAliveMs: slot.keepAliveMs });
    slot.writer.write("first");
    if (slot.keepAliveMs !== null) setTimeout(() => slot.writer?.end(), 100);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const off = new RawSse(await fetch(`${base}/0`));
    await off.readUntil((x) => x.events.length === 1);
    await new Promise((r) => setTimeout(r, 4 * KEEP_ALIVE_MS));
    writers[0]!.writer?.end();
    await off.readUntil(() => false);
    expect(off.text).toBe("data: first\n\n");

    const on = new RawSse(await fetch(`${base}/1`));
    await on.readUntil(() => false);
    expect(on.keepAliveLines()).toBeGreaterThanOrEqual(1);
    expect(writers[1]!.writer?.closed).toBe(true);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
