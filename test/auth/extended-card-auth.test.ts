/**
 * R-XCARD-2 (issue 33, finding 8): the extended agent card goes only to authenticated callers.
 * With authentication off the server still starts (local development of an agent that has an
 * extended card keeps working) but refuses GetExtendedAgentCard to everyone, UNAUTHENTICATED.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentCard } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { scriptedAgent } from "../e2e/e2e-helpers.js";
import { unary } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { expectAuthError, withAuth } from "./auth-support.js";

const agent = scriptedAgent(async (ctx) => ctx.complete("ok"), {
  description: "public description",
  extendedCard: {
    description: "for signed-in partners",
    skills: [{ id: "secret", name: "Partner skill", description: "partners only", tags: ["p"] }],
  } as never,
});
const getCard = (s: A2ATestServer, md: grpc.Metadata) => unary(s.client, s.client.getExtendedAgentCard, { tenant: "" }, md);

test("R-XCARD-2: with authentication off, GetExtendedAgentCard is UNAUTHENTICATED and the extended card is not sent", async () => {
  const s = await startA2AServer({ agent });
  try {
    const { response, error } = await getCard(s, s.metadata());
    expect(response).toBeUndefined();
    expectAuthError(error, grpc.status.UNAUTHENTICATED, "AUTHENTICATION_REQUIRED", /only to authenticated callers.*A2A_AUTH/);
    expect(error!.details).not.toMatch(/partners/);
  } finally {
    await s.close();
  }
});

test("R-XCARD-2: with authentication on, a caller with a key gets it and one without is UNAUTHENTICATED", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-xcard-"));
  const key = newApiKey();
  writeFileSync(join(dir, "keys"), `${apiKeyLine(key, { principal: "partner", tenants: undefined, scopes: [] })}\n`);
  const s = await startA2AServer({ agent, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(dir, "keys") } });
  try {
    const served = await getCard(s, withAuth({ "x-api-key": key }));
    expect(served.error).toBeUndefined();
    expect((served.response as AgentCard).skills.map((k) => k.id)).toEqual(["secret"]);
    expectAuthError((await getCard(s, withAuth({}))).error, grpc.status.UNAUTHENTICATED, "CREDENTIALS_MISSING", /x-api-key/);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
