/**
 * The hostile-input suite's HTTP+JSON family (issue 34 item 7): seeded hostile REST requests on
 * every route of the proto's annotations (tenant variants included): hostile path segments
 * (broken %-escapes, encoded slashes and colons, long and odd text), hostile query values, bodies
 * with wrong types at random places, deep and wide values, truncated and binary bodies, wrong
 * verbs and media types, with API-key authentication on and a valid key on every case, so every
 * request is routed, read, decoded and validated behind authentication. Every case gets an
 * answer (no hang), never a 5xx and never INTERNAL; the server still serves a plain call
 * afterwards, and no stream is left open.
 */
import { REST_V1_ROUTER } from "../../src/rest/index.js";
import { openStreamCount } from "../../src/streams/index.js";
import { startRestSetup, type RestSetup } from "../rest/rest-support.js";
import { RPCS, seededRandom } from "../support/hostile-fuzzer.js";

class Cases {
  constructor(private readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** A path segment: mostly an ordinary id, sometimes hostile. */
  segment(): string {
    if (this.int(3) > 0) return this.pick(["no-such-task", "t1", "tasks", "acme"]);
    return this.pick(["%zz", "%2F..%2F", "a%3Acancel", "%00", "..", "%F0%9F%98%80", "x".repeat(this.int(5_000)), "%E0%A4%A", "%ED%A0%80"]);
  }

  /** A hostile JSON value: wrong types, deep or wide nesting, long or broken strings. */
  value(depth = 0): unknown {
    switch (this.int(depth > 3 ? 6 : 9)) {
      case 0:
        return null;
      case 1:
        return this.pick([-1, 0, 2 ** 53, 1.5, 1e308]);
      case 2:
        return this.pick([true, false]);
      case 3:
        return this.pick(["", "ROLE_NOPE", "TASK_STATE_RUNNING", "\ud800", "x".repeat(this.int(20_000))]);
      case 4:
        return { [this.pick(["text", "data", "raw", "url", "unknownField", "@type"])]: this.value(depth + 1) };
      case 5:
        return [this.value(depth + 1), this.value(depth + 1)];
      case 6: {
        let deep: unknown = "bottom";
        for (let i = this.int(200); i > 0; i--) deep = { a: deep };
        return deep;
      }
      case 7:
        return Object.fromEntries(Array.from({ length: this.int(20_000) }, (_, i) => [`k${i}`, i]));
      default:
        return Array.from({ length: this.int(5_000) }, () => ({ text: "p" }));
    }
  }

  /** A body for `method`: valid, or with hostile values at random places. */
  body(method: string): unknown {
    const message = { messageId: `m-${this.int(1e9)}`, role: "ROLE_USER", parts: [{ text: this.pick(["story", "hello"]) }] };
    const valid: Record<string, unknown> =
      method === "SendMessage" || method === "SendStreamingMessage"
        ? { message, configuration: { returnImmediately: this.int(2) === 0 } }
        : method === "CreateTaskPushNotificationConfig"
          ? { url: "http://127.0.0.1:9/hook", token: "t" }
          : {};
    if (this.int(3) === 0) return valid;
    const key = this.pick(["message", "configuration", "metadata", "tenant", "id", "taskId", "url", "extra"]);
    if (key === "message" && this.int(2) === 0)
      return { ...valid, message: { ...message, [this.pick(["parts", "role", "messageId", "metadata"])]: this.value() } };
    return this.int(10) === 0 ? this.value() : { ...valid, [key]: this.value() };
  }

  /** A query string: a few known parameters with hostile values, or none. */
  query(): string {
    if (this.int(2) === 0) return "";
    const names = [
      "pageSize",
      "page_size",
      "historyLength",
      "status",
      "includeArtifacts",
      "statusTimestampAfter",
      "contextId",
      "pageToken",
      "tenant",
      "A2A-Version",
      "x",
    ];
    const values = ["1", "0", "-1", "abc", "1e3", "true", "yes", "TASK_STATE_WORKING", "TASK_STATE_NOPE", "2025-13-45T99:99:99Z", "%zz", "x".repeat(3_000)];
    return `?${Array.from({ length: 1 + this.int(3) }, () => `${this.pick(names)}=${this.pick(values)}`).join("&")}`;
  }

  /** One request: verb, path (below the base) and body as sent, and its headers beside the valid API key. */
  request(): { method: string; path: string; body: string | Uint8Array | undefined; headers: Record<string, string> } {
    const rpc = this.pick(RPCS);
    const routes = REST_V1_ROUTER.routes.filter((r) => r.method.name === rpc);
    const route = this.pick(routes);
    const path =
      this.int(25) === 0
        ? this.pick(["/", "/nope", "//tasks", "/tasks/", "/a/b/c/d/e/f", "/message:nope"])
        : `/${route.template.segments.map((s) => ("literal" in s ? s.literal : this.segment())).join("/")}${route.template.verb ? `:${route.template.verb}` : ""}`;
    const method = this.int(20) === 0 ? this.pick(["PUT", "PATCH", "DELETE", "GET", "POST"]) : route.httpMethod;
    let body: string | Uint8Array | undefined = method === "GET" || method === "DELETE" ? undefined : JSON.stringify(this.body(rpc));
    switch (body === undefined ? -1 : this.int(20)) {
      case 0:
        body = body!.slice(0, this.int(body!.length));
        break;
      case 1:
        body = Uint8Array.from({ length: 1 + this.int(512) }, () => this.int(256));
        break;
      case 2:
        body = "";
        break;
    }
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["Content-Type"] = "application/a2a+json";
    if (this.int(15) === 0) headers["A2A-Version"] = this.pick(["", "9.9", "0.3", "1", "abc"]);
    if (this.int(15) === 0) headers["Content-Type"] = this.pick(["text/plain", "application/json", "application/json; charset=latin1", "multipart/form-data"]);
    if (this.int(15) === 0) headers["A2A-Extensions"] = this.pick(["urn:x", ",,,", "x".repeat(2_000)]);
    if (this.int(20) === 0) headers["Last-Event-ID"] = this.pick(["", "nope", "x".repeat(1_000)]);
    return { method, path: path + this.query(), body, headers };
  }
}

interface Outcome {
  readonly status: number;
  /** error.status of every error body, the SSE error events' included. */
  readonly errors: string[];
}

/** Sends one case and reads the whole answer (a JSON body, or an SSE stream to its end). */
async function send(s: RestSetup, method: string, path: string, body: string | Uint8Array | undefined, headers: Record<string, string>): Promise<Outcome> {
  const res = await fetch(s.rest + path, {
    method,
    headers: { "A2A-Version": "1.0", "X-API-Key": s.aliceKey, ...headers },
    ...(body === undefined ? {} : { body }),
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
  const errors: string[] = [];
  for (const payload of payloads) {
    const parsed = JSON.parse(payload) as { error?: { status: string } };
    if (parsed.error !== undefined) errors.push(parsed.error.status);
  }
  return { status: res.status, errors };
}

let s: RestSetup;
beforeAll(async () => {
  // The limits would answer most cases before their input is read: this suite is about input.
  s = await startRestSetup({ A2A_LIMIT_RATE: "0", A2A_AUTH_FAILURE_RATE: "0", A2A_LIMIT_STREAMS_PER_PRINCIPAL: "0", A2A_LIMIT_RUNS_PER_PRINCIPAL: "0" });
});
afterAll(() => s?.close());

test("R-SEC-5 issue 34: 300 seeded hostile HTTP+JSON cases, API-key auth on with a valid key on every case: no hang, no 5xx, no internal error, no stream left open", async () => {
  const cases = new Cases(seededRandom(3435));
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < 300; i++) {
    const { method, path, body, headers } = cases.request();
    try {
      const { status, errors } = await send(s, method, path, body, headers);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500 || status === 401 || errors.includes("INTERNAL") || errors.includes("UNKNOWN"))
        failures.push(`case ${i} ${method} ${path.slice(0, 80)}: HTTP ${status}, ${errors.join(",")}`);
    } catch (error) {
      failures.push(`case ${i} ${method} ${path.slice(0, 80)}: ${(error as Error).name}: ${(error as Error).message}`);
    }
  }
  expect(failures).toEqual([]);
  // The cases reached the handlers, not only the HTTP checks.
  expect(statuses.get(200)).toBeGreaterThan(50);
  expect(statuses.get(400)).toBeGreaterThan(50);
  // The server goes on: a plain call still works, and every stream the cases opened has ended.
  expect(await send(s, "GET", "/tasks?pageSize=1", undefined, {})).toEqual({ status: 200, errors: [] });
  const deadline = Date.now() + 5_000;
  while (openStreamCount() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(openStreamCount()).toBe(0);
}, 60_000);
