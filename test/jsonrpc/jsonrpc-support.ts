/**
 * Our whole service with the HTTP listener on (card + JSON-RPC), API-key authentication with two
 * principals, push notifications on, and clients of the official @a2a-js/sdk forced onto JSON-RPC.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientFactory, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";
import { createDemoAgent } from "../../src/agents/demo/demo-agent.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import type { Agent, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

export interface JsonRpcSetup {
  readonly server: A2ATestServer;
  /** http://127.0.0.1:<port> of the HTTP listener. */
  readonly base: string;
  /** The JSON-RPC endpoint as the card lists it. */
  readonly endpoint: string;
  readonly aliceKey: string;
  readonly bobKey: string;
  /** Scripts by the message's first text; any other text goes to the demo agent. */
  readonly scripts: Map<string, (ctx: AgentContext) => Promise<void>>;
  /** An SDK client over JSON-RPC presenting `apiKey` (none: no credential). */
  client(apiKey?: string): Promise<Client>;
  /** A raw POST to the endpoint (for what the SDK never sends). */
  post(body: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export async function startJsonRpcSetup(env: Record<string, string> = {}, card: Partial<Agent["card"]> = {}): Promise<JsonRpcSetup> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-jsonrpc-"));
  const aliceKey = newApiKey();
  const bobKey = newApiKey();
  writeFileSync(
    join(dir, "keys"),
    `${apiKeyLine(aliceKey, { principal: "alice", tenants: undefined, scopes: [] })}\n${apiKeyLine(bobKey, { principal: "bob", tenants: undefined, scopes: [] })}\n`,
  );
  const demo = createDemoAgent({ stepDelayMs: 0, tickMs: 5 });
  const scripts = new Map<string, (ctx: AgentContext) => Promise<void>>();
  const agent: Agent = {
    card: { ...demo.card, extendedCard: { description: "the extended card" }, ...card },
    execute(ctx) {
      const part = ctx.message.parts[0]?.content;
      const text = part?.case === "text" ? part.value : "";
      return (scripts.get(text) ?? demo.execute.bind(demo))(ctx);
    },
  };
  const server = await startA2AServer({
    agent,
    env: {
      A2A_HTTP_LISTEN: "127.0.0.1:0",
      A2A_AUTH: "api-key",
      A2A_API_KEYS_FILE: join(dir, "keys"),
      A2A_PUSH_ALLOW_HOSTS: "127.0.0.1",
      A2A_PUSH_ALLOW_HTTP: "true",
      ...env,
    },
    advertiseBoundAddress: true,
  });
  const base = `http://127.0.0.1:${server.app.cardPort}`;
  const endpoint = server.app.card.supportedInterfaces.find((i) => i.protocolBinding === "JSONRPC")?.url ?? "";
  return {
    server,
    base,
    endpoint,
    aliceKey,
    bobKey,
    scripts,
    client(apiKey) {
      const fetchImpl: typeof fetch = (input, init) =>
        fetch(input, apiKey === undefined ? init : { ...init, headers: { ...(init?.headers as Record<string, string>), "X-API-Key": apiKey } });
      const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], preferredTransports: ["JSONRPC"] });
      return factory.createFromUrl(base);
    },
    post(body, headers = {}) {
      return fetch(endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0", "X-API-Key": aliceKey, ...headers },
        body,
      });
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
