import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ClientFactory, DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { AgentCardSchema, AgentSkillSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { buildAgentCard } from "../../src/agents/agent-card.js";
import { Worker } from "node:worker_threads";
import { AGENT_CARD_PATH, startAgentCardServer, type AgentCardServer } from "../../src/protocol/agent-card-http.js";

const card = buildAgentCard(
  { publicGrpcAddress: "127.0.0.1:50051", streaming: true, pushNotifications: false, tenant: "acme" },
  {
    name: "HTTP test agent",
    skills: [create(AgentSkillSchema, { id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] })],
    extensions: [{ uri: "https://example.com/ext/v1", required: false, params: { level: 2 } } as never],
  },
);

let server: AgentCardServer;
let base: string;
beforeAll(async () => {
  server = await startAgentCardServer({ host: "127.0.0.1", port: 0, card });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server.close());

const cardUrl = () => base + AGENT_CARD_PATH;

describe("agent card over HTTP", () => {
  test("R-CARD-1: GET /.well-known/agent-card.json serves the card as ProtoJSON that parses back to the same card", async () => {
    const res = await fetch(cardUrl());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const parsed = fromJson(AgentCardSchema, (await res.json()) as JsonValue);
    expect(parsed).toEqual(card);
  });

  test("R-DATA-5: camelCase field names; explicit-presence false flags are kept (R-CAP-5)", async () => {
    const json = (await (await fetch(cardUrl())).json()) as Record<string, any>;
    expect(Object.keys(json)).toEqual(expect.arrayContaining(["supportedInterfaces", "defaultInputModes", "defaultOutputModes"]));
    expect(JSON.stringify(json)).not.toMatch(/_[a-z]/);
    expect(json.capabilities).toMatchObject({ streaming: true, pushNotifications: false, extendedAgentCard: false });
  });

  test("R-CARD-2, A-21: the GRPC interface url is host:port with protocol version 1.0 and the tenant", async () => {
    const json = (await (await fetch(cardUrl())).json()) as Record<string, any>;
    expect(json.supportedInterfaces).toEqual([{ url: "127.0.0.1:50051", protocolBinding: "GRPC", protocolVersion: "1.0", tenant: "acme" }]);
  });

  test("R-CARD-5: Cache-Control with max-age, a strong ETag, Last-Modified; HEAD has the headers and no body", async () => {
    const get = await fetch(cardUrl());
    const body = await get.text();
    expect(get.headers.get("cache-control")).toBe("public, max-age=300");
    expect(get.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(Number.isNaN(Date.parse(get.headers.get("last-modified")!))).toBe(false);
    expect(get.headers.get("access-control-allow-origin")).toBe("*");

    const head = await fetch(cardUrl(), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
    expect(await head.text()).toBe("");
  });

  test("R-CARD-5: the ETag is a hash of the body, so a different card has a different ETag", async () => {
    const other = await startAgentCardServer({
      host: "127.0.0.1",
      port: 0,
      card: buildAgentCard(
        { publicGrpcAddress: "127.0.0.1:50052", streaming: true, pushNotifications: false },
        {
          skills: card.skills,
        },
      ),
    });
    try {
      const [a, b] = await Promise.all([fetch(cardUrl()), fetch(`http://127.0.0.1:${other.port}${AGENT_CARD_PATH}`)]);
      expect(a.headers.get("etag")).not.toBe(b.headers.get("etag"));
    } finally {
      await other.close();
    }
  });

  test("R-CARD-5: If-None-Match with the current ETag (also weak or in a list, or *) -> 304 without a body", async () => {
    const etag = (await fetch(cardUrl())).headers.get("etag")!;
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await fetch(cardUrl(), { headers: { "If-None-Match": value } });
      expect(res.status).toBe(304);
      expect(res.headers.get("etag")).toBe(etag);
      expect(await res.text()).toBe("");
    }
    expect((await fetch(cardUrl(), { headers: { "If-None-Match": '"stale"' } })).status).toBe(200);
  });

  test("R-CARD-5: If-Modified-Since at or after Last-Modified -> 304; before it -> 200", async () => {
    const lastModified = (await fetch(cardUrl())).headers.get("last-modified")!;
    expect((await fetch(cardUrl(), { headers: { "If-Modified-Since": lastModified } })).status).toBe(304);
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    expect((await fetch(cardUrl(), { headers: { "If-Modified-Since": earlier } })).status).toBe(200);
    expect((await fetch(cardUrl(), { headers: { "If-Modified-Since": "not a date" } })).status).toBe(200);
  });

  test("R-CARD-5: If-None-Match takes precedence over If-Modified-Since", async () => {
    const lastModified = (await fetch(cardUrl())).headers.get("last-modified")!;
    const res = await fetch(cardUrl(), { headers: { "If-None-Match": '"stale"', "If-Modified-Since": lastModified } });
    expect(res.status).toBe(200);
  });

  test("a query string does not change the resource", async () => {
    expect((await fetch(cardUrl() + "?x=1")).status).toBe(200);
  });

  test("other paths -> 404 with a short JSON body", async () => {
    for (const path of ["/", "/.well-known/agent.json", "/.well-known/agent-card.json/extra"]) {
      const res = await fetch(base + path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(((await res.json()) as { error: string }).error).toContain(AGENT_CARD_PATH);
    }
  });

  test("other methods -> 405 with Allow", async () => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await fetch(cardUrl(), { method, body: method === "DELETE" ? undefined : "{}" });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      await res.text();
    }
  });

  test("CORS preflight is answered so browsers can send the A2A-Version header", async () => {
    const res = await fetch(cardUrl(), {
      method: "OPTIONS",
      headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "a2a-version" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-headers")).toBe("a2a-version");
  });

  test("R-CARD-1: the official SDK's DefaultAgentCardResolver reads the card from the server", async () => {
    const resolved = await new DefaultAgentCardResolver().resolve(base);
    expect(resolved.name).toBe("HTTP test agent");
    expect(resolved.supportedInterfaces).toEqual([{ url: "127.0.0.1:50051", protocolBinding: "GRPC", protocolVersion: "1.0", tenant: "acme" }]);
    expect(resolved.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(resolved.skills.map((s) => s.id)).toEqual(["echo"]);
  });

  test("R-CARD-2: the official SDK's ClientFactory picks the GRPC interface from the served card", async () => {
    const factory = new ClientFactory({ transports: [new GrpcTransportFactory()] });
    const client = await factory.createFromUrl(base);
    // No RPC is made: the client is only built from the card (grpc-js connects lazily).
    expect(client).toBeDefined();
    // SDK internals, read only to prove the choice: a tenant decorator (R-TEN-2) around the gRPC transport.
    const transport = (client as unknown as { transport: { base: unknown; defaultTenant: string } }).transport;
    expect(transport.defaultTenant).toBe("acme");
    const grpcTransport = transport.base as { protocolName: string; grpcClient: { close(): void; getChannel(): { getTarget(): string } } };
    expect(grpcTransport.protocolName).toBe("GRPC");
    expect(grpcTransport.grpcClient.getChannel().getTarget()).toContain("127.0.0.1:50051");
    grpcTransport.grpcClient.close();
  });
});

describe("agent card server lifecycle", () => {
  test("the listener answers on a thread of its own: a card request completes while the main thread is blocked", async () => {
    // A client on another thread fetches the card; this thread blocks as soon as the client says it is starting.
    const client = new Worker(
      `const { parentPort, workerData } = require("node:worker_threads");
       parentPort.postMessage({ kind: "starting" });
       fetch(workerData.url).then((r) => r.text()).then((text) => parentPort.postMessage({ kind: "done", at: Date.now(), bytes: text.length }));`,
      { eval: true, workerData: { url: cardUrl() } },
    );
    let blockEnded = Number.POSITIVE_INFINITY;
    try {
      const done = new Promise<{ at: number; bytes: number }>((resolve) => {
        client.on("message", (message: { kind: string; at: number; bytes: number }) => {
          if (message.kind === "starting") {
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_000); // the main thread does nothing for 3 s
            blockEnded = Date.now();
          } else resolve(message);
        });
      });
      const answer = await done;
      expect(answer.bytes).toBeGreaterThan(100);
      // Served during the block: an HTTP server on this thread could not have answered before it ended.
      expect(answer.at).toBeLessThan(blockEnded);
    } finally {
      await client.terminate();
    }
  });

  test("listening on a port in use fails with the listen error", async () => {
    await expect(startAgentCardServer({ host: "127.0.0.1", port: server.port, card })).rejects.toThrow(/EADDRINUSE/);
  });

  test("close() ends even with an idle keep-alive connection open", async () => {
    const s = await startAgentCardServer({ host: "127.0.0.1", port: 0, card });
    await (await fetch(`http://127.0.0.1:${s.port}${AGENT_CARD_PATH}`)).text();
    await s.close();
    await expect(fetch(`http://127.0.0.1:${s.port}${AGENT_CARD_PATH}`)).rejects.toThrow();
  });
});
