/**
 * Issue 33 finding 9 (push part), A-9: a push config's token and credentials travel as HTTP header
 * values of every webhook call, so what no header carries as it is, is refused at creation
 * (INVALID_ARGUMENT, BadRequest naming the field), on Create and inline in SendMessage; what a
 * header does carry (Latin-1) arrives intact at a real receiver on loopback.
 */
import type * as grpc from "@grpc/grpc-js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { dispatchAgent, expectBadField, sendForTask, userMessage } from "../e2e/e2e-helpers.js";
import { loopbackResolver, pushConfig, pushRpc } from "./push-helpers.js";
import { startReceiver, type Receiver } from "./receiver.js";

const agents = dispatchAgent();
const DONE = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.complete();
});
const WAIT = agents.on(async (ctx) => {
  await ctx.working();
  await ctx.requireInput("more?");
});

let s: A2ATestServer;
let r: Receiver;
beforeAll(async () => {
  r = await startReceiver();
  s = await startA2AServer({
    agent: agents.agent,
    env: { A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true", A2A_PUSH_MAX_ATTEMPTS: "1" },
    pushResolver: loopbackResolver(),
  });
});
afterAll(async () => {
  await s.close();
  await r.close();
});

const bearer = (credentials: string) => ({ authentication: { scheme: "Bearer", credentials } });
const UNDELIVERABLE: ReadonlyArray<[string, Record<string, unknown>, string]> = [
  ["token with a lone LF", { token: "a\nb" }, "token"],
  ["token with a lone CR", { token: "a\rb" }, "token"],
  ["token with NUL", { token: "a\u0000b" }, "token"],
  ["token with a tab", { token: "a\tb" }, "token"],
  ["token with DEL", { token: "a\u007fb" }, "token"],
  ["token with a C1 control (NEL)", { token: "a\u0085b" }, "token"],
  ["token with a character past Latin-1 (euro sign)", { token: "t\u20ac" }, "token"],
  ["token with an emoji", { token: "t\u{1f600}" }, "token"],
  ["token with a leading space", { token: " tok" }, "token"],
  ["token with a trailing space", { token: "tok " }, "token"],
  ["credentials with LF", bearer("c\nX-Evil: 1"), "authentication.credentials"],
  ["credentials with NUL", bearer("c\u0000"), "authentication.credentials"],
  ["credentials past Latin-1 (Cyrillic)", bearer("\u043f\u0430\u0440\u043e\u043b\u044c"), "authentication.credentials"],
  ["credentials with a trailing tab", bearer("cred\t"), "authentication.credentials"],
];

describe("issue 33 finding 9 / A-9: push credentials that cannot travel in a header are refused at creation", () => {
  const cases = UNDELIVERABLE.map(([what, extra, field]) => [what, field, extra] as const);
  test.each(cases)("Create with %s -> INVALID_ARGUMENT on %s", async (_what, field, extra) => {
    const task = await sendForTask(s, userMessage(WAIT));
    const { error } = await pushRpc(s).create({ taskId: task.id, url: r.url("/never"), ...extra });
    const description = expectBadField(error, field);
    expect(description).toMatch(/HTTP header/);
    expect((await pushRpc(s).list({ taskId: task.id })).response!.configs).toEqual([]);
  });

  test.each(cases)("SendMessage with an inline config with %s -> INVALID_ARGUMENT on %s, and no task", async (_what, field, extra) => {
    const before = s.app.service.runningCount;
    const { error } = await new Promise<{ error?: grpc.ServiceError }>((resolve) =>
      s.client.sendMessage(
        {
          tenant: "",
          message: userMessage(DONE),
          configuration: { acceptedOutputModes: [], returnImmediately: false, taskPushNotificationConfig: pushConfig({ url: r.url("/never"), ...extra }) },
        },
        s.metadata(),
        (e) => resolve({ error: e ?? undefined }),
      ),
    );
    expectBadField(error, `configuration.task_push_notification_config.${field}`);
    expect(s.app.service.runningCount).toBe(before);
    expect(r.requests.filter((q) => q.path === "/never")).toEqual([]);
  });

  test("Latin-1 values a header does carry are accepted and arrive intact", async () => {
    const token = "t\u00f6k\u00e9n-\u00ff";
    const credentials = "caf\u00e9 cr\u00e8me";
    await sendForTask(s, userMessage(DONE), { taskPushNotificationConfig: pushConfig({ url: r.url("/latin1"), token, ...bearer(credentials) }) });
    await r.waitFor(1, 5000, (all) => all.filter((q) => q.path === "/latin1").length);
    const got = r.requests.find((q) => q.path === "/latin1")!;
    // Node's HTTP parser gives header bytes as Latin-1: the receiver reads back exactly what was stored.
    expect(got.headers["x-a2a-notification-token"]).toBe(token);
    expect(got.headers.authorization).toBe(`Bearer ${credentials}`);
  });
});
