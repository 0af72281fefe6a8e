/**
 * The a2a CLI against this server, end to end: the whole service on loopback (demo agent,
 * card listener), the CLI run as its bin runs it, output read as a user or a script would.
 */
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { a2a, closedPort, until } from "./cli-helpers.js";

let s: A2ATestServer;
let server: string[];
let cardUrl: string;
let pushServer: string[];
let pushOn: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer({ env: { A2A_CARD_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
  server = ["--server", s.target];
  pushOn = await startA2AServer({ env: { A2A_PUSH_ALLOW_HOSTS: "127.0.0.1", A2A_PUSH_ALLOW_HTTP: "true" } });
  pushServer = ["--server", pushOn.target];
  cardUrl = `http://127.0.0.1:${s.app.cardPort}`;
});
afterAll(async () => {
  await s.close();
  await pushOn.close();
});

const send = async (...args: string[]) => {
  const r = await a2a(["send", ...args, ...server, "--json"]);
  expect(r.code).toBe(0);
  return r.json();
};

describe("a2a card", () => {
  test("R-CARD-1: reads the public card from --card and shows name, interface and skills", async () => {
    const r = await a2a(["card", "--card", cardUrl, "--human"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("A2A demo agent");
    expect(r.stdout).toContain(`interface: GRPC ${s.target} (A2A 1.0)`);
    expect(r.stdout).toMatch(/story\s+Streamed story/);
    const json = await a2a(["card", "--card", cardUrl]);
    expect(json.json().supportedInterfaces[0]).toMatchObject({ url: s.target, protocolBinding: "GRPC" });
  });

  test("--extended asks the server over gRPC; a server without an extended card answers with an A2A error (exit 3)", async () => {
    const r = await a2a(["card", "--extended", ...server]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr).error.kind).toBe("a2a");
  });
});

describe("a2a send", () => {
  test("A-1: blocking by default: a message reply, then a completed task with its streamed artifact", async () => {
    expect((await send("hello", "there")).message.parts[0].text).toContain('You said: "hello there"');
    const story = await send("story");
    expect(story.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(story.task.artifacts[0].name).toBe("story");
  });

  test("human output: the task's state, status and artifact text, readable", async () => {
    const r = await a2a(["send", "story", ...server, "--human"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^task \S+ {2}COMPLETED/m);
    expect(r.stdout).toContain("── story");
    expect(r.stdout).toContain("Once upon a time, a client sent a message to an agent. The agent opened a task");
    expect(r.stdout).not.toContain("\x1b["); // not a terminal: no colours
  });

  test("A-1: --no-wait returns the task at once; get, watch and cancel use its id", async () => {
    const task = (await send("long", "30", "--no-wait")).task;
    expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain(task.status.state);
    const got = await a2a(["get", task.id, ...server]);
    expect(got.json().id).toBe(task.id);
    const canceled = await a2a(["cancel", task.id, ...server]);
    expect(canceled.code).toBe(0);
    expect(canceled.json().status.state).toBe("TASK_STATE_CANCELED");
  });

  test("A-2: --stream prints each StreamResponse as a JSON line, ending with the terminal status", async () => {
    const r = await a2a(["send", "story", "--stream", ...server]);
    expect(r.code).toBe(0);
    const events = r.lines();
    expect(events[0].task.id).toBeTruthy();
    expect(events.filter((e) => e.artifactUpdate).length).toBe(4);
    expect(events.at(-1)!.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  test("A-2: --stream on a terminal shows states, artifact text as one text, and a summary", async () => {
    const r = await a2a(["send", "story", "--stream", ...server, "--human"]);
    expect(r.stdout).toMatch(/WORKING {2}Writing a story\./);
    expect(r.stdout).toContain("agent. The agent opened");
    expect(r.stdout).toMatch(/── ended COMPLETED after [\d.]+ s · 1 artifact, 7 events/);
  });

  test("multi-turn: --task answers INPUT_REQUIRED on the same task", async () => {
    const trip = (await send("trip")).task;
    expect(trip.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const answer = (await send("Lisbon", "--task", trip.id, "--context", trip.contextId)).task;
    expect(answer.id).toBe(trip.id);
    expect(answer.status.state).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(answer.artifacts)).toContain("Lisbon");
  });

  test("--data and --file become a data part and an inline file part of the message", async () => {
    const file = new URL("./fixtures/sdk-server.ts", import.meta.url).pathname;
    const task = (await send("story", "--data", '{"n":1,"tags":["a"]}', "--file", file)).task;
    const got = (await a2a(["get", task.id, ...server])).json();
    const parts = got.history[0].parts;
    expect(parts[0]).toEqual({ text: "story" });
    expect(parts[1]).toMatchObject({ data: { n: 1, tags: ["a"] }, mediaType: "application/json" });
    expect(parts[2]).toMatchObject({ filename: "sdk-server.ts", mediaType: "application/octet-stream" });
    expect(Buffer.from(parts[2].raw, "base64").toString()).toContain("@a2a-js/sdk");
  });

  test("usage errors exit 2 before any call: nothing to send, bad --data JSON, unreadable --file", async () => {
    for (const args of [["send"], ["send", "--data", "{nope"], ["send", "x", "--file", "/nonexistent/file"], ["send", "x", "--stream", "--no-wait"]]) {
      const r = await a2a([...args, "--server", "127.0.0.1:1"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^a2a: /);
    }
  });
});

describe("a2a send -q, a2a health", () => {
  test("-q prints only the task id, for scripts: TASK=$(a2a send ... -q)", async () => {
    const r = await a2a(["send", "long", "30", "--no-wait", "-q", ...server]);
    const id = r.stdout.trim();
    expect(r.stdout).toBe(`${id}\n`);
    expect((await a2a(["get", id, ...server])).json().id).toBe(id);
    await a2a(["cancel", id, ...server]);
    expect((await a2a(["send", "hello", "-q", ...server])).stdout).toBe(""); // a message reply has no task
  });

  test("FND-HEALTH: health reports SERVING for the A2A service and the server (exit 0)", async () => {
    const r = await a2a(["health", ...server]);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({ service: "lf.a2a.v1.A2AService", status: "SERVING" });
    expect((await a2a(["health", "", ...server, "--human"])).stdout).toBe("(server): SERVING\n");
    expect((await a2a(["health", "no.such.Service", ...server])).code).toBe(1); // NOT_FOUND from the health service
  });
});

describe("a2a list", () => {
  test("A-13: filters by context and state, pages with --limit and --page, --all reads every page", async () => {
    const first = (await send("story")).task;
    await send("story", "--context", first.contextId);
    await send("story", "--context", first.contextId);
    const page1 = await a2a(["list", "--context", first.contextId, "--limit", "2", ...server]);
    const body = page1.json();
    expect(body.tasks).toHaveLength(2);
    expect(body.totalSize).toBe(3);
    const page2 = (await a2a(["list", "--context", first.contextId, "--limit", "2", "--page", body.nextPageToken, ...server])).json();
    expect(page2.tasks).toHaveLength(1);
    const all = await a2a(["list", "--context", first.contextId, "--limit", "2", "--all", ...server]);
    expect(all.lines().flatMap((p) => p.tasks.map((t: { id: string }) => t.id))).toHaveLength(3);
    const human = await a2a(["list", "--context", first.contextId, "--state", "completed", "--limit", "2", ...server, "--human"]);
    expect(human.stdout).toContain("2 of 3 tasks");
    const hint = /next page: (a2a list .*)$/m.exec(human.stdout)![1]!;
    expect(hint).toMatch(new RegExp(`^a2a list --page \\S+ --context ${first.contextId} --state completed --limit 2$`));
    // The hint is a command that works: it reads the last task.
    const next = await a2a([...hint.split(" ").slice(1), ...server]);
    expect(next.json().tasks).toHaveLength(1);
    const none = (await a2a(["list", "--context", first.contextId, "--state", "failed", ...server])).json();
    expect(none.totalSize).toBe(0);
  });

  test("client-side checks exit 2: an unknown state, a limit out of range, a bad date", async () => {
    for (const args of [
      ["--state", "sleeping"],
      ["--limit", "0"],
      ["--since", "yesterday"],
    ]) {
      expect((await a2a(["list", ...args, ...server])).code).toBe(2);
    }
  });

  test("R-ERR-5: a page token the server did not issue is INVALID_ARGUMENT with the field named (exit 1)", async () => {
    const r = await a2a(["list", "--page", "forged", ...server, "--human"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^INVALID_ARGUMENT: /);
    expect(r.stderr).toMatch(/page_token/);
  });
});

describe("a2a watch", () => {
  test("A-18: follows a task to its end: snapshot, progress, artifact, final status (JSON Lines)", async () => {
    const task = (await send("long", "2", "--no-wait")).task;
    const r = await a2a(["watch", task.id, ...server]);
    expect(r.code).toBe(0);
    const events = r.lines();
    expect(events[0].task.id).toBe(task.id);
    expect(events.some((e) => /step \d\/2/.test(JSON.stringify(e.statusUpdate ?? {})))).toBe(true);
    expect(events.at(-1)!.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  test("Ctrl-C cancels the subscription, not the task (exit 130)", async () => {
    const task = (await send("long", "30", "--no-wait")).task;
    const r = await a2a(["watch", task.id, ...server, "--human"], {
      onStart: (interrupt, output) => void until(() => output().includes("step"), "a progress line").then(interrupt),
    });
    expect(r.code).toBe(130);
    expect(r.stderr).toContain("the task goes on");
    const after = (await a2a(["get", task.id, ...server])).json();
    expect(after.status.state).toBe("TASK_STATE_WORKING");
    await a2a(["cancel", task.id, ...server]);
  });
});

describe("errors and exit codes", () => {
  test("R-ERR-3: an A2A error prints its ErrorInfo reason and metadata, exit 3", async () => {
    const r = await a2a(["get", "no-such-task", ...server, "--human"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('TASK_NOT_FOUND: task "no-such-task" was not found (NOT_FOUND)');
    expect(r.stderr).toContain("task_id: no-such-task");
    const json = await a2a(["cancel", "no-such-task", ...server]);
    expect(json.stdout).toBe("");
    expect(JSON.parse(json.stderr).error).toMatchObject({ kind: "a2a", code: "NOT_FOUND", reason: "TASK_NOT_FOUND", metadata: { task_id: "no-such-task" } });
  });

  test("R-PUSH: push add, get, list, rm against this server (loopback receiver allowed explicitly)", async () => {
    const task = (await a2a(["send", "story", ...pushServer, "--json"])).json().task;
    const run = (...args: string[]) => a2a(["push", ...args, ...pushServer]);
    const added = await run("add", task.id, "http://127.0.0.1:9/hook", "--id", "cfg-1", "--notify-token", "t0k");
    expect(added.code).toBe(0);
    expect(added.json()).toMatchObject({ id: "cfg-1", taskId: task.id, url: "http://127.0.0.1:9/hook", token: "t0k" });
    expect((await run("get", task.id, "cfg-1")).json().url).toBe("http://127.0.0.1:9/hook");
    const human = await a2a(["push", "list", task.id, ...pushServer, "--human"]);
    expect(human.stdout).toContain("push config cfg-1");
    expect(human.stdout).not.toContain("t0k");
    expect((await run("rm", task.id, "cfg-1")).json()).toEqual({ deleted: { taskId: task.id, id: "cfg-1" } });
    const gone = await run("get", task.id, "cfg-1");
    expect(gone.code).toBe(3);
    expect(JSON.parse(gone.stderr).error.code).toBe("NOT_FOUND");
  });

  test("A-11: push commands on a server with push off get PUSH_NOTIFICATION_NOT_SUPPORTED, exit 3", async () => {
    const off = await startA2AServer({ env: { A2A_PUSH_NOTIFICATIONS: "false" } });
    try {
      const task = (await a2a(["send", "story", "--server", off.target, "--json"])).json().task;
      for (const args of [
        ["add", task.id, "http://127.0.0.1:9/hook"],
        ["get", task.id, "c1"],
        ["list", task.id],
        ["rm", task.id, "c1"],
      ]) {
        const r = await a2a(["push", ...args, "--server", off.target]);
        expect(r.code).toBe(3);
        expect(JSON.parse(r.stderr).error.reason).toBe("PUSH_NOTIFICATION_NOT_SUPPORTED");
      }
    } finally {
      await off.close();
    }
  });

  test("a server that is not there is a connection failure, exit 4, reported at once", async () => {
    const port = await closedPort();
    const started = Date.now();
    const r = await a2a(["get", "x", "--server", `127.0.0.1:${port}`, "--human"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`cannot connect to 127.0.0.1:${port}`);
    expect(Date.now() - started).toBeLessThan(8000);
    const card = await a2a(["send", "x", "--card", `http://127.0.0.1:${port}`]);
    expect(card.code).toBe(4);
  });

  test("usage: an unknown command or option, or a missing argument, exits 2", async () => {
    expect((await a2a(["frobnicate"])).code).toBe(2);
    expect((await a2a(["get"])).code).toBe(2);
    expect((await a2a(["get", "x", "--bogus"])).code).toBe(2);
    expect((await a2a(["push", "nope", "x"])).code).toBe(2);
    expect((await a2a([])).code).toBe(2);
  });

  test("--help and --version", async () => {
    const help = await a2a(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes:");
    expect((await a2a(["send", "--help"])).stdout).toContain("Usage: a2a send");
    expect((await a2a(["help", "watch"])).stdout).toContain("Usage: a2a watch");
    expect((await a2a(["--version"])).stdout).toMatch(/^a2a \d+\.\d+\.\d+/);
  });
});

describe("discovery and environment", () => {
  test("R-CARD-1: --card finds the gRPC server in the card's GRPC interface", async () => {
    const r = await a2a(["send", "hello", "--card", cardUrl]);
    expect(r.code).toBe(0);
    expect(r.json().message).toBeDefined();
  });

  test("A2A_SERVER and A2A_CARD_URL name the server when no option does; --server wins", async () => {
    expect((await a2a(["get", "no-such"], { env: { A2A_SERVER: s.target } })).code).toBe(3);
    expect((await a2a(["get", "no-such"], { env: { A2A_CARD_URL: cardUrl } })).code).toBe(3);
    const port = await closedPort();
    expect((await a2a(["get", "no-such", ...server], { env: { A2A_CARD_URL: `http://127.0.0.1:${port}` } })).code).toBe(3);
  });

  test("on a terminal: colours, unless NO_COLOR is set", async () => {
    const colour = await a2a(["send", "story", ...server], { tty: true });
    expect(colour.stdout).toContain("\x1b[32m"); // COMPLETED in green
    const plain = await a2a(["send", "story", ...server], { tty: true, env: { NO_COLOR: "1" } });
    expect(plain.stdout).not.toContain("\x1b[");
    expect(plain.stdout).toMatch(/^task \S+ {2}COMPLETED/m);
  });
});
