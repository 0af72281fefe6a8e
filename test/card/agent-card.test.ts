import { clone, create, toJson } from "@bufbuild/protobuf";
import { AgentCardSchema, AgentSkillSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AgentCardContribution } from "../../src/lifecycle/ports/agent.js";
import { buildAgentCard, buildExtendedAgentCard, getExtendedAgentCard, type AgentCardSettings } from "../../src/agents/agent-card.js";
import { ExtendedAgentCardNotConfiguredError, UnsupportedOperationError } from "../../src/lifecycle/model/errors.js";

const settings: AgentCardSettings = { publicGrpcAddress: "agent.example.com:443", streaming: true, pushNotifications: false };
const skill = create(AgentSkillSchema, { id: "echo", name: "Echo", description: "Echoes the text back", tags: ["echo"] });
const contribution: AgentCardContribution = { name: "Echo agent", description: "Says it back", skills: [skill] };

describe("agent card", () => {
  test("R-CARD-2, A-21: one GRPC interface, url host:port, protocol_version 1.0", () => {
    const card = buildAgentCard(settings, contribution);
    expect(card.supportedInterfaces).toHaveLength(1);
    expect(card.supportedInterfaces[0]).toMatchObject({
      url: "agent.example.com:443",
      protocolBinding: "GRPC",
      protocolVersion: "1.0",
      tenant: "",
    });
  });

  test("R-BIND-15, R-BIND-16: every served binding is listed, gRPC, JSON-RPC, HTTP+JSON, the preferred one first", () => {
    const urls = { jsonRpcUrl: "https://agent.example.com/a2a/jsonrpc", restUrl: "https://agent.example.com/a2a/rest" };
    const order = (preferredBinding?: "grpc" | "jsonrpc" | "rest") =>
      buildAgentCard({ ...settings, ...urls, preferredBinding }, contribution).supportedInterfaces.map((i) => i.protocolBinding);
    expect(order()).toEqual(["GRPC", "JSONRPC", "HTTP+JSON"]);
    expect(order("jsonrpc")).toEqual(["JSONRPC", "GRPC", "HTTP+JSON"]);
    expect(order("rest")).toEqual(["HTTP+JSON", "GRPC", "JSONRPC"]);
    expect(buildAgentCard({ ...settings, restUrl: urls.restUrl, preferredBinding: "jsonrpc" }, contribution).supportedInterfaces.map((i) => i.url)).toEqual([
      "agent.example.com:443",
      urls.restUrl,
    ]);
  });

  test("R-TEN-2: a configured tenant is advertised on the interface", () => {
    const card = buildAgentCard({ ...settings, tenant: "acme" }, contribution);
    expect(card.supportedInterfaces[0].tenant).toBe("acme");
  });

  test.each(["http://agent:50051", "agent", "agent:", "agent:99999", ""])(
    "A-21: a public gRPC address that is not host:port (%p) is refused at start-up",
    (address) => {
      expect(() => buildAgentCard({ ...settings, publicGrpcAddress: address }, contribution)).toThrow(/must be host:port/);
    },
  );

  test("A-21: IPv4 and bracketed IPv6 host:port are accepted", () => {
    expect(buildAgentCard({ ...settings, publicGrpcAddress: "127.0.0.1:50051" }, contribution).supportedInterfaces[0].url).toBe("127.0.0.1:50051");
    expect(buildAgentCard({ ...settings, publicGrpcAddress: "[::1]:50051" }, contribution).supportedInterfaces[0].url).toBe("[::1]:50051");
  });

  test("R-CAP-5, R-CARD-4: capability flags are explicitly present, true or false, in the ProtoJSON", () => {
    const off = buildAgentCard({ ...settings, streaming: false, pushNotifications: false }, contribution);
    expect(toJson(AgentCardSchema, off)).toMatchObject({
      capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    });
    const on = buildAgentCard({ ...settings, streaming: true, pushNotifications: true }, contribution);
    expect(on.capabilities).toMatchObject({ streaming: true, pushNotifications: true, extendedAgentCard: false });
  });

  test("R-CAP-3: extended_agent_card is true only when the agent supplies an extended card", () => {
    expect(buildAgentCard(settings, contribution).capabilities?.extendedAgentCard).toBe(false);
    const withExtended = buildAgentCard(settings, { ...contribution, extendedCard: { description: "More" } });
    expect(withExtended.capabilities?.extendedAgentCard).toBe(true);
  });

  test("R-EXT: the agent's extensions are declared in capabilities", () => {
    const card = buildAgentCard(settings, {
      ...contribution,
      extensions: [{ uri: "https://example.com/ext/v1", required: true } as never],
    });
    expect(card.capabilities?.extensions.map((e) => [e.uri, e.required])).toEqual([["https://example.com/ext/v1", true]]);
  });

  test("R-CARD-3: defaults fill name, description, version and modes", () => {
    const card = buildAgentCard(settings, { skills: [skill] });
    expect(card.name).not.toBe("");
    expect(card.description).not.toBe("");
    expect(card.version).toBe("1.0.0");
    expect(card.defaultInputModes).toEqual(["text/plain"]);
    expect(card.defaultOutputModes).toEqual(["text/plain"]);
  });

  test("the agent's card fields are used; operator settings win over them", () => {
    const agentCard = buildAgentCard(settings, {
      ...contribution,
      version: "2.3.0",
      defaultInputModes: ["application/json"],
      defaultOutputModes: ["text/markdown"],
      documentationUrl: "https://example.com/docs",
    });
    expect(agentCard).toMatchObject({
      name: "Echo agent",
      description: "Says it back",
      version: "2.3.0",
      defaultInputModes: ["application/json"],
      defaultOutputModes: ["text/markdown"],
      documentationUrl: "https://example.com/docs",
    });
    const operator = buildAgentCard({ ...settings, name: "Ops name", description: "Ops text", version: "9.9.9" }, contribution);
    expect(operator).toMatchObject({ name: "Ops name", description: "Ops text", version: "9.9.9" });
  });

  test("plain-object skills from a JavaScript agent module become proper messages", () => {
    const card = buildAgentCard(settings, {
      skills: [{ id: "s", name: "S", description: "d", tags: ["t"] } as never],
    });
    expect(card.skills[0].$typeName).toBe("lf.a2a.v1.AgentSkill");
  });

  test("A-21, R-CARD-3: an agent with no skills is refused at start-up with a clear error", () => {
    expect(() => buildAgentCard(settings, { name: "x" })).toThrow(/declares no skills.*at least one/);
    expect(() => buildAgentCard(settings, undefined)).toThrow(/declares no skills/);
    expect(() => buildAgentCard(settings, { skills: [] })).toThrow(/declares no skills/);
  });

  test("R-CARD-3: a skill missing id, name, description or tags is refused, naming every field", () => {
    const bad = { id: "", name: "", description: "", tags: [] } as never;
    expect(() => buildAgentCard(settings, { skills: [bad] })).toThrow(
      /R-CARD-3.*skills\[0\]\.id is required; skills\[0\]\.name is required; skills\[0\]\.description is required; skills\[0\]\.tags is required/,
    );
  });

  test("R-CARD-3: a provider needs url and organization", () => {
    expect(() => buildAgentCard(settings, { ...contribution, provider: { organization: "Acme" } as never })).toThrow(/provider\.url is required/);
  });

  test("R-CARD-3: the built-in demo agent's contribution makes a valid card", async () => {
    const { default: demo } = await import("../../src/agents/demo/demo-agent.js");
    const card = buildAgentCard(settings, demo.card);
    expect(card.skills.length).toBeGreaterThan(0);
  });

  test("R-CARD-6: the public card carries no extended content and declares no auth schemes", () => {
    const card = buildAgentCard(settings, { ...contribution, extendedCard: { description: "secret-ish details" } });
    expect(JSON.stringify(toJson(AgentCardSchema, card))).not.toContain("secret-ish");
    expect(card.securitySchemes).toEqual({});
    expect(card.securityRequirements).toEqual([]);
  });
});

describe("extended agent card", () => {
  const extraSkill = { id: "admin", name: "Admin", description: "Privileged skill", tags: ["admin"] } as never;
  const withExtended: AgentCardContribution = {
    ...contribution,
    extendedCard: { description: "Full description", skills: [skill, extraSkill] },
  };

  test("R-XCARD: the extended card merges the agent's fields over the public card", () => {
    const card = buildAgentCard(settings, withExtended);
    const extended = buildExtendedAgentCard(card, withExtended)!;
    expect(extended.name).toBe("Echo agent");
    expect(extended.description).toBe("Full description");
    expect(extended.skills.map((s) => s.id)).toEqual(["echo", "admin"]);
    expect(extended.skills[1].$typeName).toBe("lf.a2a.v1.AgentSkill");
  });

  test("R-CARD-4: interfaces and capability flags stay the server's in the extended card", () => {
    const card = buildAgentCard(settings, withExtended);
    const extended = buildExtendedAgentCard(card, {
      ...withExtended,
      extendedCard: {
        supportedInterfaces: [{ url: "elsewhere:1" }] as never,
        capabilities: { streaming: false, pushNotifications: true } as never,
      },
    })!;
    expect(extended.supportedInterfaces).toEqual(card.supportedInterfaces);
    expect(extended.capabilities).toMatchObject({ streaming: true, pushNotifications: false, extendedAgentCard: true });
  });

  test("the extended card is independent of the public card", () => {
    const card = buildAgentCard(settings, withExtended);
    const extended = buildExtendedAgentCard(card, withExtended)!;
    extended.supportedInterfaces[0].url = "changed:1";
    expect(card.supportedInterfaces[0].url).toBe("agent.example.com:443");
  });

  test("no extendedCard from the agent: no extended card", () => {
    expect(buildExtendedAgentCard(buildAgentCard(settings, contribution), contribution)).toBeUndefined();
  });

  test("R-CAP-3, R-XCARD-1: capability absent or false -> UnsupportedOperationError naming extended_agent_card", () => {
    const card = buildAgentCard(settings, contribution);
    const call = () => getExtendedAgentCard(card, undefined);
    expect(call).toThrow(UnsupportedOperationError);
    expect(call).toThrow(/agent card does not declare capabilities\.extended_agent_card/);
    const absent = clone(AgentCardSchema, card);
    absent.capabilities!.extendedAgentCard = undefined;
    expect(() => getExtendedAgentCard(absent, undefined)).toThrow(UnsupportedOperationError);
  });

  test("R-CAP-3: declared but not configured -> ExtendedAgentCardNotConfiguredError", () => {
    const card = buildAgentCard(settings, withExtended);
    expect(() => getExtendedAgentCard(card, undefined)).toThrow(ExtendedAgentCardNotConfiguredError);
  });

  test("R-XCARD-1: declared and configured -> the extended card", () => {
    const card = buildAgentCard(settings, withExtended);
    const extended = buildExtendedAgentCard(card, withExtended);
    expect(getExtendedAgentCard(card, extended)).toBe(extended);
  });
});
