/**
 * One card for both generations (A-37, R-V03-50/51): the header-less superset, the pure v1.0 and
 * v0.3 forms, their caching headers, and real clients of both SDK generations reading it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { ClientFactory as V03ClientFactory, DefaultAgentCardResolver as V03CardResolver } from "a2a-sdk-v03/client";
import { AgentCardSchema, AgentSkillSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { buildAgentCard } from "../../src/agents/agent-card.js";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { AGENT_CARD_PATH, startAgentCardServer } from "../../src/protocol/agent-card-http.js";
import { toV03CardJson, v03CardInterfaces } from "../../src/v03/card/index.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

type Json = Record<string, any>;

let s: A2ATestServer;
let dir: string;
let base: string;
const cardUrl = () => base + AGENT_CARD_PATH;
const get = (headers: Record<string, string> = {}, query = "") => fetch(cardUrl() + query, { headers });
const json = async (headers: Record<string, string> = {}, query = "") => (await (await get(headers, query)).json()) as Json;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-v03card-"));
  writeFileSync(join(dir, "keys"), `${apiKeyLine(newApiKey(), { principal: "alice", tenants: undefined, scopes: [] })}\n`);
  const demo = createDemoAgent({ stepDelayMs: 0, tickMs: 5 });
  s = await startA2AServer({
    agent: { card: { ...demo.card, extendedCard: { description: "the extended card" } }, execute: (ctx) => demo.execute(ctx) },
    env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(dir, "keys") },
    advertiseBoundAddress: true,
  });
  base = `http://127.0.0.1:${s.app.cardPort}`;
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the card's interfaces", () => {
  test("A-37, R-V03-6: after the 1.0 entries, JSONRPC 0.3 (v0.3's default transport), GRPC 0.3 (same host:port) and HTTP+JSON 0.3 at their paths", () => {
    expect(s.app.card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url])).toEqual([
      ["GRPC", "1.0", s.target],
      ["JSONRPC", "1.0", `${base}/a2a/jsonrpc`],
      ["HTTP+JSON", "1.0", `${base}/a2a/rest`],
      ["JSONRPC", "0.3", `${base}/a2a/v0.3/jsonrpc`],
      ["GRPC", "0.3", s.target],
      ["HTTP+JSON", "0.3", `${base}/a2a/v0.3/rest`],
    ]);
  });

  test("R-V03-6: a 0.3 path that is off is not listed; JSON-RPC leads the 0.3 entries unless rest is preferred", () => {
    expect(
      v03CardInterfaces({ grpcAddress: "h:1", httpBase: "http://h", jsonRpcPath: "/j", restPath: "/r", preferred: "rest" }).map((i) => i.protocolBinding),
    ).toEqual(["HTTP+JSON", "JSONRPC", "GRPC"]);
    const only = v03CardInterfaces({ grpcAddress: "h:1", httpBase: "http://h", jsonRpcPath: "/rpc03", restPath: null, preferred: "jsonrpc" });
    expect(only.map((i) => [i.protocolBinding, i.url])).toEqual([
      ["JSONRPC", "http://h/rpc03"],
      ["GRPC", "h:1"],
    ]);
    // Without an HTTP listener only gRPC serves 0.3.
    expect(v03CardInterfaces({ grpcAddress: "h:1", httpBase: undefined, jsonRpcPath: "/a", restPath: "/b", preferred: "rest" })).toEqual([
      { url: "h:1", protocolBinding: "GRPC", protocolVersion: "0.3" },
    ]);
  });
});

describe("the three forms", () => {
  test("A-37: A2A-Version 1.0 gets the pure v1.0 ProtoJSON card, byte for byte", async () => {
    const res = await get({ "A2A-Version": "1.0" });
    expect(await res.text()).toBe(JSON.stringify(toJson(AgentCardSchema, s.app.card)));
  });

  test("A-37: the header-less card is the v1.0 card plus v0.3's url, preferredTransport, additionalInterfaces, protocolVersion", async () => {
    const card = await json();
    // A v1.0 reader with the generated schema (unknown fields ignored) reads exactly our card: schemes included.
    expect(fromJson(AgentCardSchema, card as JsonValue, { ignoreUnknownFields: true })).toEqual(s.app.card);
    expect(card).toMatchObject({
      url: `${base}/a2a/v0.3/jsonrpc`,
      preferredTransport: "JSONRPC",
      additionalInterfaces: [
        { url: `${base}/a2a/v0.3/jsonrpc`, transport: "JSONRPC" },
        { url: s.target, transport: "GRPC" },
        { url: `${base}/a2a/v0.3/rest`, transport: "HTTP+JSON" },
      ],
      protocolVersion: "0.3",
      supportsAuthenticatedExtendedCard: true,
      security: [{ apiKey: [] }],
    });
    expect(card.supportedInterfaces).toHaveLength(6);
  });

  test("A-37: each securitySchemes entry carries both shapes (v0.3 `type` + OpenAPI fields, v1.0 oneof member)", async () => {
    const card = await json();
    expect(card.securitySchemes.apiKey).toEqual({
      type: "apiKey",
      in: "header",
      name: "x-api-key",
      description: expect.any(String),
      apiKeySecurityScheme: { location: "header", name: "x-api-key", description: expect.any(String) },
    });
  });

  test("R-V03-50, BQ-20: A2A-Version 0.3 gets the pure v0.3 card", async () => {
    const card = await json({ "A2A-Version": "0.3" });
    expect(card).toEqual(toV03CardJson(s.app.card));
    expect(card).toMatchObject({
      name: s.app.card.name,
      version: s.app.card.version,
      protocolVersion: "0.3",
      url: `${base}/a2a/v0.3/jsonrpc`,
      preferredTransport: "JSONRPC",
      supportsAuthenticatedExtendedCard: true,
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key", description: expect.any(String) } },
      security: [{ apiKey: [] }],
      capabilities: { streaming: true, pushNotifications: true },
    });
    expect(card.additionalInterfaces).toHaveLength(3);
    // Only v0.3's fields: no v1.0 interface list, requirement form, oneof member, or capability of 1.0 alone.
    expect(card).not.toHaveProperty("supportedInterfaces");
    expect(card).not.toHaveProperty("securityRequirements");
    expect(card.securitySchemes.apiKey).not.toHaveProperty("apiKeySecurityScheme");
    expect(card.capabilities).not.toHaveProperty("extendedAgentCard");
    expect(card.capabilities).not.toHaveProperty("stateTransitionHistory");
    expect(card.skills[0]).toEqual(expect.objectContaining({ id: s.app.card.skills[0]!.id, tags: s.app.card.skills[0]!.tags }));
  });

  test("R-BIND-11, BQ-6: ?A2A-Version= selects the form too; the header wins over the query", async () => {
    expect(await json({}, "?A2A-Version=0.3")).not.toHaveProperty("supportedInterfaces");
    expect(await json({}, "?A2A-Version=1.0")).not.toHaveProperty("url");
    expect(await json({ "A2A-Version": "1.0" }, "?A2A-Version=0.3")).not.toHaveProperty("url");
    // Later 1.x and 0.x versions map to their generation; an unreadable one gets the header-less card.
    expect(await json({ "A2A-Version": "1.1" })).not.toHaveProperty("url");
    expect(await json({ "A2A-Version": "0.2" })).not.toHaveProperty("supportedInterfaces");
    expect(await json({ "A2A-Version": "latest" })).toMatchObject({ url: `${base}/a2a/v0.3/jsonrpc`, supportedInterfaces: expect.any(Array) });
  });
});

describe("security in the v0.3 form", () => {
  const card = buildAgentCard(
    {
      publicGrpcAddress: "127.0.0.1:50051",
      streaming: false,
      pushNotifications: false,
      v03Interfaces: v03CardInterfaces({ grpcAddress: "127.0.0.1:50051", httpBase: undefined, jsonRpcPath: null, restPath: null, preferred: "grpc" }),
      security: {
        securitySchemes: {
          bearer: { scheme: { case: "httpAuthSecurityScheme", value: { scheme: "Bearer", bearerFormat: "JWT" } } },
          oidc: { scheme: { case: "openIdConnectSecurityScheme", value: { openIdConnectUrl: "https://id.example/.well-known/openid-configuration" } } },
          mtls: { scheme: { case: "mtlsSecurityScheme", value: { description: "client certificate" } } },
          oauth: {
            scheme: {
              case: "oauth2SecurityScheme",
              value: { flows: { flow: { case: "clientCredentials", value: { tokenUrl: "https://id.example/token", scopes: { "a2a:send": "send" } } } } },
            },
          },
        },
        securityRequirements: [{ schemes: { oauth: { list: ["a2a:send"] } } }, { schemes: { bearer: { list: [] }, mtls: { list: [] } } }],
      },
    },
    {
      skills: [
        create(AgentSkillSchema, {
          id: "echo",
          name: "Echo",
          description: "Echoes",
          tags: ["echo"],
          securityRequirements: [{ schemes: { mtls: { list: [] } } }],
        }),
      ],
    },
  );

  test("R-V03-50: each scheme kind in its OpenAPI form; requirements as {name: [scopes]}, on skills too", () => {
    const v03 = toV03CardJson(card) as Json;
    expect(v03.securitySchemes).toEqual({
      bearer: { type: "http", scheme: "Bearer", bearerFormat: "JWT" },
      oidc: { type: "openIdConnect", openIdConnectUrl: "https://id.example/.well-known/openid-configuration" },
      mtls: { type: "mutualTLS", description: "client certificate" },
      oauth: { type: "oauth2", flows: { clientCredentials: { tokenUrl: "https://id.example/token", scopes: { "a2a:send": "send" } } } },
    });
    expect(v03.security).toEqual([{ oauth: ["a2a:send"] }, { bearer: [], mtls: [] }]);
    expect(v03.skills[0].security).toEqual([{ mtls: [] }]);
  });

  test("A-37: every scheme kind survives the header-less card for a v1.0 reader", async () => {
    const thread = await startAgentCardServer({ host: "127.0.0.1", port: 0, card });
    try {
      const plain = (await (await fetch(`http://127.0.0.1:${thread.port}${AGENT_CARD_PATH}`)).json()) as Json;
      expect(fromJson(AgentCardSchema, plain as JsonValue, { ignoreUnknownFields: true })).toEqual(card);
      expect(Object.values(plain.securitySchemes).map((scheme) => (scheme as Json).type)).toEqual(["http", "openIdConnect", "mutualTLS", "oauth2"]);
      expect(plain.skills[0].security).toEqual([{ mtls: [] }]);
    } finally {
      await thread.close();
    }
  });
});

describe("caching per form", () => {
  test("R-BIND-19: Vary: A2A-Version on every form; three different strong ETags", async () => {
    const answers = await Promise.all([get(), get({ "A2A-Version": "1.0" }), get({ "A2A-Version": "0.3" })]);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get("vary")).toBe("A2A-Version");
      expect(res.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]+"$/);
      await res.text();
    }
    expect(new Set(answers.map((r) => r.headers.get("etag"))).size).toBe(3);
  });

  test("R-BIND-19: If-None-Match answers 304 for the form's own ETag only; HEAD carries the form's headers", async () => {
    const forms: Record<string, string>[] = [{}, { "A2A-Version": "1.0" }, { "A2A-Version": "0.3" }];
    const etags = await Promise.all(forms.map(async (h) => (await get(h)).headers.get("etag")!));
    for (const [i, headers] of forms.entries()) {
      for (const [j, etag] of etags.entries()) {
        const res = await get({ ...headers, "If-None-Match": etag });
        expect([i, j, res.status]).toEqual([i, j, i === j ? 304 : 200]);
        if (i === j) expect(res.headers.get("vary")).toBe("A2A-Version");
        await res.text();
      }
    }
    const head = await fetch(cardUrl(), { method: "HEAD", headers: { "A2A-Version": "0.3" } });
    expect(head.headers.get("etag")).toBe(etags[2]);
    expect(Number(head.headers.get("content-length"))).toBe(Buffer.byteLength(JSON.stringify(toV03CardJson(s.app.card))));
  });

  test("the card's own thread (no JSON-RPC listener) negotiates the same way", async () => {
    const card = buildAgentCard(
      {
        publicGrpcAddress: "127.0.0.1:50051",
        streaming: true,
        pushNotifications: false,
        v03Interfaces: v03CardInterfaces({ grpcAddress: "127.0.0.1:50051", httpBase: undefined, jsonRpcPath: null, restPath: null, preferred: "grpc" }),
      },
      { skills: [create(AgentSkillSchema, { id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] })] },
    );
    const thread = await startAgentCardServer({ host: "127.0.0.1", port: 0, card });
    try {
      const at = (headers: Record<string, string>) => fetch(`http://127.0.0.1:${thread.port}${AGENT_CARD_PATH}`, { headers });
      const [plain, v10, v03] = await Promise.all([at({}), at({ "A2A-Version": "1.0" }), at({ "A2A-Version": "0.3" })]);
      expect(plain.headers.get("vary")).toBe("A2A-Version");
      expect(((await plain.json()) as Json).preferredTransport).toBe("GRPC");
      expect(await v10.text()).toBe(JSON.stringify(toJson(AgentCardSchema, card)));
      expect(await v03.json()).toEqual(toV03CardJson(card));
    } finally {
      await thread.close();
    }
  });
});

describe("A2A_V03=off", () => {
  test("A-37: no 0.3 interface, and every request gets the pure v1.0 card, without Vary", async () => {
    const off = await startA2AServer({ env: { A2A_HTTP_LISTEN: "127.0.0.1:0", A2A_V03: "off" }, advertiseBoundAddress: true });
    try {
      expect(off.app.card.supportedInterfaces.map((i) => i.protocolVersion)).toEqual(["1.0", "1.0", "1.0"]);
      const v10 = JSON.stringify(toJson(AgentCardSchema, off.app.card));
      for (const headers of [{}, { "A2A-Version": "1.0" }, { "A2A-Version": "0.3" }] as Record<string, string>[]) {
        const res = await fetch(`http://127.0.0.1:${off.app.cardPort}${AGENT_CARD_PATH}`, { headers });
        expect(res.headers.get("vary")).toBeNull();
        expect(await res.text()).toBe(v10);
      }
    } finally {
      await off.close();
    }
  });
});

describe("real clients of both generations", () => {
  test("A-37: the v0.3 SDK client (0.3.14) resolves a transport from the header-less card: the 0.3 JSON-RPC endpoint", async () => {
    const client = await new V03ClientFactory().createFromUrl(base);
    expect((client as unknown as { transport: { endpoint: string } }).transport.endpoint).toBe(`${base}/a2a/v0.3/jsonrpc`);
    // Its resolver keeps the card as JSON-schema form (it would re-parse a card without `type` as v0.3 ProtoJSON).
    const card = (await new V03CardResolver().resolve(base)) as unknown as Json;
    expect(card.securitySchemes.apiKey.type).toBe("apiKey");
    // The same client given the pure v1.0 card finds nothing it speaks: what the superset prevents.
    await expect(new V03ClientFactory().createFromAgentCard((await json({ "A2A-Version": "1.0" })) as never)).rejects.toThrow("No compatible transport found");
  });

  test("A-37: the v1.0 SDK client (1.3.0) reads the card it asks for (A2A-Version 1.0), and the header-less one too", async () => {
    const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory()] });
    const client = await factory.createFromUrl(base);
    expect((client as unknown as { transport: { endpoint: string } }).transport.endpoint).toBe(`${base}/a2a/jsonrpc`);
    const stripped: typeof fetch = (input, init) => fetch(input, { ...init, headers: {} });
    const fromPlain = await new ClientFactory({
      transports: [new JsonRpcTransportFactory()],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: stripped }),
    }).createFromUrl(base);
    // It picks the 1.0 JSON-RPC interface, not the 0.3 one listed beside it.
    expect((fromPlain as unknown as { transport: { endpoint: string } }).transport.endpoint).toBe(`${base}/a2a/jsonrpc`);
  });
});
