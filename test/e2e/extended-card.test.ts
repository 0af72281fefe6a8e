/**
 * GetExtendedAgentCard (R-CAP-3, R-XCARD-1) through the real gRPC server: off, declared but
 * not configured, and served.
 */
import { BacklogBudget } from "../../src/streams/index.js";
import * as grpc from "@grpc/grpc-js";
import { clone } from "@bufbuild/protobuf";
import { AgentCardSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AgentCard } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { createA2AHandlers } from "../../src/service/a2a-handlers.js";
import { a2aStatusMapper } from "../../src/protocol/status-mapper.js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { unary } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { bareMetadata, expectA2AError, scriptedAgent } from "./e2e-helpers.js";

const servers: A2ATestServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function start(options: Parameters<typeof startA2AServer>[0]) {
  const s = await startA2AServer(options);
  servers.push(s);
  return s;
}

const PARTNER_KEY = newApiKey();
const getCard = (s: A2ATestServer, md = s.metadata()) => unary(s.client, s.client.getExtendedAgentCard, { tenant: "" }, md);
const reply = async (ctx: { reply(text: string): Promise<void> }) => ctx.reply("hi");

test("R-CAP-3: without capabilities.extended_agent_card, GetExtendedAgentCard is FAILED_PRECONDITION / UNSUPPORTED_OPERATION", async () => {
  const s = await start({ agent: scriptedAgent(reply) });
  expect(s.app.card.capabilities?.extendedAgentCard).toBe(false);
  const { error } = await getCard(s);
  expectA2AError(error, grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION");
  expect(error!.details).toMatch(/extended_agent_card/);
});

test("R-CAP-3: declared but not configured is FAILED_PRECONDITION / EXTENDED_AGENT_CARD_NOT_CONFIGURED", async () => {
  const s = await start({ agent: scriptedAgent(reply) });
  // A card that claims the capability with no extended card behind it (a misconfiguration createApp cannot build).
  const card = clone(AgentCardSchema, s.app.card);
  card.capabilities!.extendedAgentCard = true;
  s.server.useHandlers(
    createA2AHandlers({
      service: s.app.service,
      card,
      extendedCard: undefined,
      allowMissingVersion: false,
      streamLimits: { streamBytes: 1 << 20, streamEntries: 16, entryBytes: 1 << 20, shared: new BacklogBudget(1 << 24) },
    }),
    a2aStatusMapper,
  );
  const { error } = await getCard(s);
  expectA2AError(error, grpc.status.FAILED_PRECONDITION, "EXTENDED_AGENT_CARD_NOT_CONFIGURED");
});

test("R-XCARD-1: an agent with card.extendedCard serves it: its own skills and description, the server's interfaces and capabilities", async () => {
  // R-XCARD-2: only to authenticated callers (test/auth/extended-card-auth.test.ts covers the refusals).
  const dir = mkdtempSync(join(tmpdir(), "a2a-xcard-"));
  writeFileSync(join(dir, "keys"), `${apiKeyLine(PARTNER_KEY, { principal: "partner", tenants: undefined, scopes: [] })}\n`);
  const s = await start({
    env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(dir, "keys") },
    agent: scriptedAgent(reply, {
      description: "public description",
      extendedCard: {
        description: "for signed-in partners",
        skills: [{ id: "secret", name: "Partner skill", description: "only in the extended card", tags: ["partner"] }],
      } as never,
    }),
  });
  rmSync(dir, { recursive: true, force: true }); // read at start; reloaded only on SIGHUP
  expect(s.app.card.capabilities?.extendedAgentCard).toBe(true);
  const { response, error } = await getCard(s, s.metadata({ "x-api-key": PARTNER_KEY }));
  expect(error).toBeUndefined();
  const card = response as AgentCard;
  expect(card.description).toBe("for signed-in partners");
  expect(card.skills.map((k) => k.id)).toEqual(["secret"]);
  expect(card.supportedInterfaces).toEqual([
    { url: "127.0.0.1:50051", protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" },
    { url: "127.0.0.1:50051", protocolBinding: "GRPC", tenant: "", protocolVersion: "0.3" }, // the 0.3 interfaces too
  ]);
  expect(card.capabilities).toMatchObject({ extendedAgentCard: true, pushNotifications: true, streaming: true });
  expect(card.name).toBe(s.app.card.name);
});

test("R-VER-3: GetExtendedAgentCard checks the version first, like every RPC", async () => {
  const s = servers[servers.length - 1]!;
  expectA2AError((await getCard(s, bareMetadata())).error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
});
