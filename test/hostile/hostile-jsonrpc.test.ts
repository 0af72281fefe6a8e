/**
 * The hostile-input suite's HTTP family (issue 33 "Done when", issue 34 item 7): seeded hostile
 * JSON-RPC requests (broken envelopes, wrong types at random places of valid params, deep and wide
 * values, lone surrogates, truncated and binary bodies, batches, odd headers) on all 11 methods, with
 * API-key authentication on and a valid key on every case, so every body is read, decoded and
 * validated behind authentication. Every case gets an answer (no hang), never a 5xx and never
 * -32603 (an internal error); the server still serves a plain call afterwards, and no stream is left open.
 */
import { openStreamCount } from "../../src/streams/index.js";
import { startJsonRpcSetup, type JsonRpcSetup } from "../jsonrpc/jsonrpc-support.js";
import { RPCS, seededRandom } from "../support/hostile-fuzzer.js";

class Cases {
  constructor(private readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** Valid params for `method`, the starting point of most cases. */
  params(method: string): Record<string, unknown> {
    const message = { messageId: `m-${this.int(1e9)}`, role: "ROLE_USER", parts: [{ text: this.pick(["story", "hello", "ask"]) }] };
    switch (method) {
      case "SendMessage":
      case "SendStreamingMessage":
        return { message, configuration: { returnImmediately: this.int(2) === 0 } };
      case "ListTasks":
        return { pageSize: 5 };
      case "CreateTaskPushNotificationConfig":
        return { taskId: "no-such-task", url: "http://127.0.0.1:9/hook", token: "t" };
      case "GetExtendedAgentCard":
        return {};
      default:
        return { id: "no-such-task", taskId: "no-such-task" };
    }
  }

  /** A hostile JSON value: wrong types, deep or wide nesting, long or broken strings. */
  value(depth = 0): unknown {
    switch (this.int(depth > 3 ? 7 : 10)) {
      case 0:
        return null;
      case 1:
        return this.pick([-1, 0, 2 ** 53, -(2 ** 31), 1.5, 1e308]);
      case 2:
        return this.pick([true, false]);
      case 3:
        return this.pick(["", "ROLE_NOPE", "TASK_STATE_WORKING", "\ud800", "\u0000\u001f", "x".repeat(this.int(20_000))]);
      case 4:
        return "AAAA====not-base64";
      case 5:
        return { [this.pick(["text", "data", "raw", "url", "unknownField", "@type"])]: this.value(depth + 1) };
      case 6:
        return [this.value(depth + 1), this.value(depth + 1)];
      case 7: {
        let deep: unknown = "bottom";
        for (let i = this.int(200); i > 0; i--) deep = { a: deep };
        return deep;
      }
      case 8:
        return Object.fromEntries(Array.from({ length: this.int(20_000) }, (_, i) => [`k${i}`, i]));
      default:
        return Array.from({ length: this.int(5_000) }, () => ({ text: "p" }));
    }
  }

  /** `params` with a few values, at random places, replaced by hostile ones. */
  mutate(params: Record<string, unknown>): unknown {
    const copy = JSON.parse(JSON.stringify(params)) as Record<string, unknown>;
    for (let n = this.int(3) + 1; n > 0; n--) {
      let node: Record<string, unknown> = copy;
      for (;;) {
        const keys = Object.keys(node);
        const key = keys.length === 0 || this.int(4) === 0 ? this.pick(["metadata", "parts", "message", "tenant", "historyLength", "extra"]) : this.pick(keys);
        const child = node[key];
        if (child !== null && typeof child === "object" && !Array.isArray(child) && this.int(2) === 0) {
          node = child as Record<string, unknown>;
          continue;
        }
        node[key] = this.value();
        break;
      }
    }
    return this.int(10) === 0 ? this.value() : copy;
  }

  /** One request: the body as sent, and its headers beside the valid API key. */
  request(): { body: string | Uint8Array; headers: Record<string, string> } {
    const method = this.int(20) === 0 ? this.pick(["", "message/send", "tasks/get", "Foo", "rpc.discover"]) : this.pick(RPCS);
    const envelope: Record<string, unknown> = { jsonrpc: "2.0", id: this.int(1000), method, params: this.mutate(this.params(method)) };
    switch (this.int(12)) {
      case 0:
        envelope["jsonrpc"] = this.pick(["1.0", 2, undefined]);
        break;
      case 1:
        envelope["id"] = this.pick([{ a: 1 }, [1], 1.5, "x".repeat(5_000), true]);
        break;
      case 2:
        envelope["params"] = this.pick([[1, 2], "params", 7]);
        break;
      case 3:
        delete envelope["id"];
        break;
    }
    let body: string | Uint8Array = JSON.stringify(envelope);
    switch (this.int(20)) {
      case 0:
        body = body.slice(0, this.int(body.length));
        break;
      case 1:
        body = Uint8Array.from({ length: 1 + this.int(512) }, () => this.int(256));
        break;
      case 2:
        body = JSON.stringify([envelope, envelope]);
        break;
      case 3:
        body = "";
        break;
    }
    const headers: Record<string, string> = {};
    if (this.int(15) === 0) headers["A2A-Version"] = this.pick(["", "9.9", "0.3", "1", "abc"]);
    if (this.int(15) === 0)
      headers["Content-Type"] = this.pick(["text/plain", "application/a2a+json", "application/json; charset=latin1", "multipart/form-data"]);
    if (this.int(15) === 0) headers["A2A-Extensions"] = this.pick(["urn:x", ",,,", "x".repeat(2_000)]);
    return { body, headers };
  }
}

interface Outcome {
  readonly status: number;
  readonly codes: number[];
}

/** Sends one case and reads the whole answer (a JSON body, or an SSE stream to its end). */
async function send(s: JsonRpcSetup, body: string | Uint8Array, headers: Record<string, string>): Promise<Outcome> {
  const res = await fetch(s.endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": s.aliceKey, ...headers },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const payloads = (res.headers.get("content-type") ?? "").startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
    : text === ""
      ? []
      : [text];
  const codes: number[] = [];
  for (const payload of payloads) {
    const parsed = JSON.parse(payload) as { jsonrpc?: string; error?: { code: number } } | Array<{ error?: { code: number } }>;
    for (const answer of Array.isArray(parsed) ? parsed : [parsed]) if (answer.error !== undefined) codes.push(answer.error.code);
  }
  return { status: res.status, codes };
}

let s: JsonRpcSetup;
beforeAll(async () => {
  // The limits would answer most cases before their input is read: this suite is about input.
  s = await startJsonRpcSetup({ A2A_LIMIT_RATE: "0", A2A_AUTH_FAILURE_RATE: "0", A2A_LIMIT_STREAMS_PER_PRINCIPAL: "0", A2A_LIMIT_RUNS_PER_PRINCIPAL: "0" });
});
afterAll(() => s?.close());

test("R-SEC-5 issue 33 issue 34: 400 seeded hostile JSON-RPC cases, API-key auth on with a valid key on every case: no hang, no 5xx, no internal error, no stream left open", async () => {
  const cases = new Cases(seededRandom(3334));
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < 400; i++) {
    const { body, headers } = cases.request();
    try {
      const { status, codes } = await send(s, body, headers);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500 || status === 401 || codes.includes(-32603)) failures.push(`case ${i}: HTTP ${status}, codes ${codes.join(",")}`);
    } catch (error) {
      failures.push(`case ${i}: ${(error as Error).name}: ${(error as Error).message}`);
    }
  }
  expect(failures).toEqual([]);
  // The cases reached the methods, not only the envelope checks.
  expect(statuses.get(200)).toBeGreaterThan(100);
  // The server goes on: a plain call still works, and every stream the cases opened has ended.
  const plain = await send(s, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: { pageSize: 1 } }), {});
  expect(plain).toEqual({ status: 200, codes: [] });
  const deadline = Date.now() + 5_000;
  while (openStreamCount() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(openStreamCount()).toBe(0);
}, 300_000);
