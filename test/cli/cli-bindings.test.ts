/**
 * The a2a CLI on every binding it speaks (--binding grpc|jsonrpc|rest): the same commands
 * against our server (gRPC; JSON-RPC over https with mutual TLS and an API key, so the
 * credentials options are proven on the HTTP side too) and against the official @a2a-js/sdk's
 * own express JSON-RPC and HTTP+JSON servers (test/cli/fixtures/sdk-server.ts).
 * RUNS is the list of (server, binding) pairs: a new binding of ours is one line there.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { cardInterfaceOf } from "../../src/cli/connection.js";
import { makeTestPki, type TestPki } from "../foundation/certs.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { a2a, closedPort, startSdkServer, until } from "./cli-helpers.js";

let pki: TestPki;
let keysDir: string;
let key: string;
let ours: A2ATestServer;
let oursCard: string;
let oursJsonRpc: string;
let sdk: Awaited<ReturnType<typeof startSdkServer>>;

beforeAll(async () => {
  pki = makeTestPki();
  keysDir = mkdtempSync(join(tmpdir(), "a2a-cli-bindings-"));
  key = newApiKey();
  writeFileSync(join(keysDir, "keys"), `${apiKeyLine(key, { principal: "alice", tenants: undefined, scopes: [] })}\n`);
  [ours, sdk] = await Promise.all([
    startA2AServer({
      env: {
        A2A_HTTP_LISTEN: "127.0.0.1:0",
        A2A_AUTH: "api-key",
        A2A_API_KEYS_FILE: join(keysDir, "keys"),
        A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
        A2A_PUSH_ALLOW_HTTP: "true",
        // The HTTP listener takes the gRPC TLS policy; the test harness keeps gRPC itself plaintext.
        A2A_TLS_CERT: pki.serverCert,
        A2A_TLS_KEY: pki.serverKey,
        A2A_TLS_CLIENT_CA: pki.caCert,
      },
      advertiseBoundAddress: true,
    }),
    startSdkServer({ http: true }),
  ]);
  oursCard = `https://localhost:${ours.app.cardPort}`;
  oursJsonRpc = ours.app.card.supportedInterfaces.find((i) => i.protocolBinding === "JSONRPC")!.url;
}, 30_000);
afterAll(async () => {
  await ours?.close();
  await sdk?.close();
  pki?.remove();
  rmSync(keysDir, { recursive: true, force: true });
});

const mtls = () => ["--ca", pki.caCert, "--cert", pki.clientCert, "--key", pki.clientKey];

interface BindingRun {
  readonly name: string;
  /** Where to connect and how to authenticate. */
  readonly args: () => string[];
  /** A message that starts a task which runs until canceled, reporting "step" lines. */
  readonly long: string[];
}

const RUNS: BindingRun[] = [
  { name: "our server, grpc", args: () => ["--server", ours.target, "--binding", "grpc", "--api-key", key], long: ["long", "30"] },
  { name: "our server, jsonrpc", args: () => ["--card", oursCard, "--binding", "jsonrpc", ...mtls(), "--api-key", key], long: ["long", "30"] },
  { name: "our server, rest", args: () => ["--card", oursCard, "--binding", "rest", ...mtls(), "--api-key", key], long: ["long", "30"] },
  { name: "SDK express server, jsonrpc", args: () => ["--card", sdk.httpBase, "--binding", "jsonrpc"], long: ["long"] },
  { name: "SDK express server, rest", args: () => ["--card", sdk.httpBase, "--binding", "rest"], long: ["long"] },
];

describe.each(RUNS)("R-BIND-1: a2a on $name", (binding) => {
  const run = async (...args: string[]) => {
    const r = await a2a([...args, ...binding.args(), "--json"]);
    if (r.code !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
    return r;
  };

  test("send waits for the completed task; get reads it back", async () => {
    const task = (await run("send", "story")).json().task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts[0].parts.length).toBeGreaterThan(0);
    const got = (await run("get", task.id, "--history", "1")).json();
    expect(got).toMatchObject({ id: task.id, status: { state: "TASK_STATE_COMPLETED" } });
  });

  test("send --stream shows the task live (SSE on the HTTP bindings) until COMPLETED", async () => {
    const human = await a2a(["send", "story", "--stream", ...binding.args(), "--human"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^task \S+/m);
    expect(human.stdout).toMatch(/── ended COMPLETED after/);
    const events = (await run("send", "story", "--stream")).lines();
    expect(events[0]!.task.id).toBeTruthy();
    expect(events.at(-1)).toMatchObject({ statusUpdate: { status: { state: "TASK_STATE_COMPLETED" } } });
  });

  test("send --no-wait, watch (Ctrl-C stops watching, exit 130), cancel", async () => {
    const task = (await run("send", ...binding.long, "--no-wait")).json().task;
    const watched = await a2a(["watch", task.id, ...binding.args(), "--human"], {
      onStart: (interrupt, output) => void until(() => output().includes("step"), "a progress line").then(interrupt),
    });
    expect(watched.code).toBe(130);
    expect((await run("get", task.id)).json().status.state).toBe("TASK_STATE_WORKING");
    expect((await run("cancel", task.id)).json().status.state).toBe("TASK_STATE_CANCELED");
  });

  test("list pages with --limit", async () => {
    const page = (await run("list", "--limit", "1")).json();
    expect(page.tasks).toHaveLength(1);
    expect(page.totalSize).toBeGreaterThanOrEqual(2);
    expect(page.nextPageToken).not.toBe("");
  });

  test("push add, get, list, rm", async () => {
    const task = (await run("send", "story")).json().task;
    const url = "http://127.0.0.1:9/hook";
    const added = (await run("push", "add", task.id, url, "--id", "cfg-1", "--notify-token", "t0k")).json();
    expect(added).toMatchObject({ id: "cfg-1", taskId: task.id, url, token: "t0k" });
    expect((await run("push", "get", task.id, "cfg-1")).json().url).toBe(url);
    expect((await run("push", "list", task.id)).json().configs.map((c: { id: string }) => c.id)).toEqual(["cfg-1"]);
    expect((await run("push", "rm", task.id, "cfg-1")).json()).toEqual({ deleted: { taskId: task.id, id: "cfg-1" } });
    expect((await run("push", "list", task.id)).json().configs ?? []).toEqual([]);
  });

  test("R-BIND-4: an unknown task is TASK_NOT_FOUND from the binding's ErrorInfo, exit 3", async () => {
    const human = await a2a(["get", "no-such-task", ...binding.args(), "--human"]);
    expect(human.code).toBe(3);
    expect(human.stderr).toMatch(/^TASK_NOT_FOUND: .*\(NOT_FOUND\)/);
    const json = await a2a(["get", "no-such-task", ...binding.args(), "--json"]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr).error).toMatchObject({ kind: "a2a", code: "NOT_FOUND", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" });
  });
  test("card --extended asks over the binding: a server without an extended card answers with an A2A error, exit 3", async () => {
    const r = await a2a(["card", "--extended", ...binding.args(), "--json"]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stderr).error.kind).toBe("a2a");
  });
});

describe("a2a errors and credentials on the HTTP bindings", () => {
  test("R-BIND-5: without the API key our JSON-RPC answers 401: UNAUTHENTICATED, exit 1 as on gRPC", async () => {
    for (const where of [
      ["--server", ours.target],
      ["--card", oursCard, "--binding", "jsonrpc", ...mtls()],
    ]) {
      const r = await a2a(["get", "t-1", ...where, "--json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stderr).error).toMatchObject({ kind: "status", code: "UNAUTHENTICATED" });
    }
  });

  test("R-BIND-38: a bad field is INVALID_ARGUMENT with its BadRequest field violation, exit 1, on gRPC and JSON-RPC", async () => {
    const task = (await a2a(["send", "story", "--server", ours.target, "--api-key", key, "--json"])).json().task;
    for (const where of [
      ["--server", ours.target],
      ["--card", oursCard, "--binding", "jsonrpc", ...mtls()],
    ]) {
      const r = await a2a(["push", "add", task.id, "not a url", ...where, "--api-key", key, "--json"]);
      expect(r.code).toBe(1);
      const error = JSON.parse(r.stderr).error;
      expect(error.code).toBe("INVALID_ARGUMENT");
      expect(error.fieldViolations[0].field).toMatch(/url/);
    }
  });

  test("A-25: https without the client certificate, or without our CA, is a connection failure (exit 4)", async () => {
    const noClientCert = await a2a(["get", "t-1", "--server", oursJsonRpc, "--binding", "jsonrpc", "--ca", pki.caCert, "--api-key", key]);
    expect(noClientCert.code).toBe(4);
    const unknownCa = await a2a(["get", "t-1", "--server", oursJsonRpc, "--binding", "jsonrpc", "--api-key", key]);
    expect(unknownCa.code).toBe(4);
    expect(unknownCa.stderr).toMatch(/cannot connect to https:\/\/127\.0\.0\.1:\d+: [A-Z_]+/);
  });

  test("a refused connection is exit 4 on jsonrpc and rest; the error names the server, not the key", async () => {
    const port = await closedPort();
    for (const binding of ["jsonrpc", "rest"]) {
      const r = await a2a(["list", "--server", `http://127.0.0.1:${port}/a2a`, "--binding", binding, "--token", "s3cret", "--human"]);
      expect(r.code).toBe(4);
      expect(r.stderr).toContain(`cannot connect to http://127.0.0.1:${port}: ECONNREFUSED`);
      expect(r.stderr).not.toContain("s3cret");
    }
  });

  test("R-JRPC-15, R-HTTP-17: an error event after the first event ends the stream with that error's exit code", async () => {
    // A peer that starts a stream, then gives up with RESOURCE_EXHAUSTED (A-32's mid-stream form).
    const task = { task: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } } };
    const error = { code: 429, status: "RESOURCE_EXHAUSTED", message: "reader too slow" };
    const peer = await listen((req, body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (req.url === "/rpc") {
        const id = (JSON.parse(body) as { id: string }).id;
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: task })}\n\n`);
        res.end(`event: error\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -31008, message: "reader too slow" } })}\n\n`);
      } else {
        res.write(`data: ${JSON.stringify(task)}\n\n`);
        res.end(`event: error\ndata: ${JSON.stringify({ error })}\n\n`);
      }
    });
    try {
      for (const [binding, url] of [
        ["jsonrpc", `${peer.url}/rpc`],
        ["rest", `${peer.url}/rest`],
      ]) {
        const r = await a2a(["watch", "t-1", "--server", url!, "--binding", binding!, "--json"]);
        expect(r.code).toBe(1);
        expect(r.lines()[0]).toEqual(task);
        expect(JSON.parse(r.stderr).error).toMatchObject({ code: "RESOURCE_EXHAUSTED", message: "reader too slow" });
      }
    } finally {
      await peer.close();
    }
  });

  test("--timeout bounds a unary call on the HTTP bindings: a silent server is exit 4", async () => {
    const peer = await listen(() => {}); // reads the request, never answers
    try {
      const r = await a2a(["get", "t-1", "--server", peer.url, "--binding", "rest", "--timeout", "0.3", "--human"]);
      expect(r.code).toBe(4);
      expect(r.stderr).toContain(`no answer from ${peer.url} within 300 ms`);
    } finally {
      await peer.close();
    }
  });

  test("--binding is checked: an unknown name, or an HTTP binding with nowhere to go, is a usage error (exit 2)", async () => {
    expect((await a2a(["list", "--binding", "soap"])).stderr).toContain("--binding must be grpc, jsonrpc or rest");
    expect((await a2a(["list", "--binding", "soap"])).code).toBe(2);
    expect((await a2a(["list", "--binding", "rest"])).code).toBe(2);
    expect((await a2a(["list", "--binding", "jsonrpc", "--server", "grpc://127.0.0.1:1"])).code).toBe(2);
    expect((await a2a(["health", "--binding", "rest", "--server", sdk.httpBase])).code).toBe(2);
  });

  test("R-BIND-15: without --binding a card whose first interface is JSONRPC is spoken over JSON-RPC (a JSON-RPC-first agent)", async () => {
    // A card (served here) that puts the SDK's JSON-RPC url first and a dead gRPC address after it.
    const dead = `127.0.0.1:${await closedPort()}`;
    const card = {
      name: "jsonrpc first",
      supportedInterfaces: [
        { url: `${sdk.httpBase}/a2a/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: dead, protocolBinding: "GRPC", protocolVersion: "1.0" },
      ],
    };
    const cardServer = await listen((_req, _body, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(card)));
    try {
      const r = await a2a(["send", "story", "--card", cardServer.url, "--json"]);
      expect(r.code).toBe(0);
      expect(r.json().task.status.state).toBe("TASK_STATE_COMPLETED");
      expect((await a2a(["send", "story", "--card", cardServer.url, "--binding", "grpc"])).code).toBe(4);
    } finally {
      await cardServer.close();
    }
  });

  test("R-BIND-15: --binding picks the card's interface of that binding; without it, the card's first the CLI speaks", () => {
    const card = {
      supportedInterfaces: [
        { url: "https://a.example/v03", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        { url: "https://a.example/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0", tenant: "t1" },
        { url: "a.example:443", protocolBinding: "GRPC", protocolVersion: "1.0" },
        { url: "https://a.example/rpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ],
    };
    expect(cardInterfaceOf(card, "card")).toMatchObject({ binding: "rest", address: "https://a.example/rest", tls: true, tenant: "t1" });
    expect(cardInterfaceOf(card, "card", "jsonrpc")).toMatchObject({ binding: "jsonrpc", address: "https://a.example/rpc" });
    expect(cardInterfaceOf(card, "card", "grpc")).toMatchObject({ binding: "grpc", address: "a.example:443", tls: false });
    expect(() => cardInterfaceOf({ supportedInterfaces: card.supportedInterfaces.slice(2) }, "card", "rest")).toThrow(
      "lists no HTTP+JSON interface for A2A 1.x",
    );
  });

  test("--help documents --binding", async () => {
    const r = await a2a(["--help"]);
    expect(r.stdout).toMatch(/-b, --binding BINDING +grpc, jsonrpc or rest/);
  });
});

/** A loopback HTTP peer that misbehaves as `handle` says (a server outside the system). */
async function listen(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void) {
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => handle(req, body, res));
  }).listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
