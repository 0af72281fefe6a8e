/**
 * The a2a CLI against the official @a2a-js/sdk gRPC server (a child process on a free
 * loopback port, test/cli/fixtures/sdk-server.ts): the CLI is a client of any A2A v1.0
 * gRPC server, not only of ours. The SDK server supports push configs, so the push
 * commands are proven here end to end.
 */
import { a2a, startSdkServer, until } from "./cli-helpers.js";

let sdk: Awaited<ReturnType<typeof startSdkServer>>;
let server: string[];
beforeAll(async () => {
  sdk = await startSdkServer();
  server = ["--server", sdk.target];
}, 30_000);
afterAll(() => sdk?.close());

const run = async (...args: string[]) => {
  const r = await a2a([...args, ...server, "--json"]);
  if (r.code !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r;
};

describe("a2a CLI against the @a2a-js/sdk gRPC server", () => {
  test("send (blocking) completes the task; get reads it back", async () => {
    const task = (await run("send", "hello")).json().task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts[0].parts[0].text).toBe("done");
    expect((await run("get", task.id)).json().id).toBe(task.id);
  });

  test("send --stream renders the SDK's stream: artifact chunks as one text, then COMPLETED", async () => {
    const r = await a2a(["send", "story", "--stream", ...server, "--human"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Once upon a time.");
    expect(r.stdout).toMatch(/COMPLETED {2}finished/);
    expect(r.stdout).toMatch(/── ended COMPLETED after/);
  });

  test("send --no-wait, watch (Ctrl-C keeps the task), cancel", async () => {
    const task = (await run("send", "long", "--no-wait")).json().task;
    const watched = await a2a(["watch", task.id, ...server, "--human"], {
      onStart: (interrupt, output) => void until(() => output().includes("step"), "a progress line").then(interrupt),
    });
    expect(watched.code).toBe(130);
    expect((await run("get", task.id)).json().status.state).toBe("TASK_STATE_WORKING");
    const canceled = await run("cancel", task.id);
    expect(canceled.json().status.state).toBe("TASK_STATE_CANCELED");
  });

  test("list pages through the SDK's tasks", async () => {
    const page = (await run("list", "--limit", "1")).json();
    expect(page.tasks).toHaveLength(1);
    expect(page.totalSize).toBeGreaterThanOrEqual(2);
  });

  test("push add, get, list, rm", async () => {
    const task = (await run("send", "hello")).json().task;
    const added = (
      await run(
        "push",
        "add",
        task.id,
        "http://127.0.0.1:9/hook",
        "--id",
        "cfg-1",
        "--notify-token",
        "t0k",
        "--auth-scheme",
        "Bearer",
        "--auth-credentials",
        "secret",
      )
    ).json();
    expect(added).toMatchObject({ id: "cfg-1", taskId: task.id, url: "http://127.0.0.1:9/hook", token: "t0k", authentication: { scheme: "Bearer" } });
    expect((await run("push", "get", task.id, "cfg-1")).json().url).toBe("http://127.0.0.1:9/hook");
    const human = await a2a(["push", "list", task.id, ...server, "--human"]);
    expect(human.stdout).toContain("push config cfg-1");
    expect(human.stdout).toContain("token: (set)"); // secrets are not printed for people
    expect(human.stdout).not.toContain("t0k");
    expect((await run("push", "rm", task.id, "cfg-1")).json()).toEqual({ deleted: { taskId: task.id, id: "cfg-1" } });
    const gone = await a2a(["push", "get", task.id, "cfg-1", ...server]);
    expect(gone.code).not.toBe(0);
    expect(JSON.parse(gone.stderr).error.code).toBe("NOT_FOUND");
  });

  test("an unknown task is the SDK's A2A error, with its ErrorInfo reason (exit 3)", async () => {
    const r = await a2a(["get", "no-such-task", ...server, "--human"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^TASK_NOT_FOUND: /);
  });
});
