import { clone, create, type MessageInitShape } from "@bufbuild/protobuf";
import { AgentCardSchema, type AgentCard, type AgentExtension } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { type AgentCardContribution, ExtendedAgentCardNotConfiguredError, UnsupportedOperationError } from "../lifecycle/index.js";

/** What the server itself decides about its card (from configuration). */
export interface AgentCardSettings {
  /** `host:port` as clients dial it; no scheme. */
  readonly publicGrpcAddress: string;
  /** The JSON-RPC binding's absolute URL, when it is served (listed after gRPC, R-BIND-15/16). */
  readonly jsonRpcUrl?: string;
  /** The 0.3 interfaces (A-37, R-V03-6: src/v03/card/v03-interfaces.ts), listed after the 1.0 ones; none when A2A_V03=off. */
  readonly v03Interfaces?: readonly { readonly url: string; readonly protocolBinding: string; readonly protocolVersion: string }[];
  /** Operator overrides; they win over the agent's own name/description/version. */
  readonly name?: string;
  readonly description?: string;
  readonly version?: string;
  /** Capability switches: they drive R-CAP behaviour, so the card states them explicitly (R-CAP-5). */
  readonly streaming: boolean;
  readonly pushNotifications: boolean;
  /** How webhooks are signed and the key that verifies them (issue 33 finding 5): declared as an extension. */
  readonly pushSignature?: AgentExtension;
  /** Advertised on the GRPC interface; clients then send exactly this tenant (R-TEN-2). */
  readonly tenant?: string;
  /**
   * security_schemes and security_requirements, made from the authentication configuration the
   * edge enforces (src/auth/security-card.ts), so the card declares exactly what is enforced.
   */
  readonly security?: Pick<MessageInitShape<typeof AgentCardSchema>, "securitySchemes" | "securityRequirements">;
}

export const DEFAULT_AGENT_NAME = "A2A gRPC agent";
export const DEFAULT_AGENT_DESCRIPTION = "An agent served over the A2A v1.0 gRPC binding.";
export const DEFAULT_AGENT_VERSION = "1.0.0";
export const DEFAULT_MODES: readonly string[] = ["text/plain"];
export const GRPC_PROTOCOL_BINDING = "GRPC";
export const A2A_PROTOCOL_VERSION = "1.0";

// host:port with a DNS name, IPv4 address or bracketed IPv6 address.
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/**
 * Builds the public Agent Card from server settings and the agent's contribution.
 * Throws at start-up when the result would not be a valid card (R-CARD-3), so a
 * misconfigured agent never serves a card that clients reject.
 */
/** AgentInterface.protocol_binding of the JSON-RPC 2.0 binding (§5.2: spelled exactly so). */
export const JSONRPC_PROTOCOL_BINDING = "JSONRPC";

export function buildAgentCard(settings: AgentCardSettings, contribution: AgentCardContribution = {}): AgentCard {
  checkGrpcAddress(settings.publicGrpcAddress);
  const skills = contribution.skills ?? [];
  if (skills.length === 0) {
    throw new Error(
      "agent card: the agent declares no skills; A2A requires at least one (R-CARD-3, A-21). " +
        "Add `card.skills` to the agent, e.g. [{ id, name, description, tags: [...] }].",
    );
  }
  const card = create(AgentCardSchema, {
    name: settings.name || contribution.name || DEFAULT_AGENT_NAME,
    description: settings.description || contribution.description || DEFAULT_AGENT_DESCRIPTION,
    version: settings.version || contribution.version || DEFAULT_AGENT_VERSION,
    supportedInterfaces: [
      {
        url: settings.publicGrpcAddress,
        protocolBinding: GRPC_PROTOCOL_BINDING,
        protocolVersion: A2A_PROTOCOL_VERSION,
        tenant: settings.tenant ?? "",
      },
      ...(settings.jsonRpcUrl === undefined
        ? []
        : [{ url: settings.jsonRpcUrl, protocolBinding: JSONRPC_PROTOCOL_BINDING, protocolVersion: A2A_PROTOCOL_VERSION, tenant: settings.tenant ?? "" }]),
      ...(settings.v03Interfaces ?? []),
    ],
    provider: contribution.provider,
    documentationUrl: contribution.documentationUrl,
    iconUrl: contribution.iconUrl,
    capabilities: {
      // Set both ways on purpose: an absent flag means "unsupported" (R-CAP-5), and saying so is clearer.
      streaming: settings.streaming,
      pushNotifications: settings.pushNotifications,
      extendedAgentCard: contribution.extendedCard !== undefined,
      extensions: [...(contribution.extensions ?? []), ...(settings.pushSignature ? [settings.pushSignature] : [])],
    },
    defaultInputModes: nonEmptyOr(contribution.defaultInputModes, DEFAULT_MODES),
    defaultOutputModes: nonEmptyOr(contribution.defaultOutputModes, DEFAULT_MODES),
    skills,
    // R-CARD-8: the declared schemes are the enforced ones (none when callers are anonymous).
    securitySchemes: settings.security?.securitySchemes ?? {},
    securityRequirements: settings.security?.securityRequirements ?? [],
  });
  assertValidAgentCard(card, "agent card");
  return card;
}

/**
 * The extended card (R-XCARD): the agent's `extendedCard` over the public card, or
 * undefined when the agent gives none. Interfaces and capability switches stay the
 * server's, since they must tell the truth about this server (R-CARD-4).
 */
export function buildExtendedAgentCard(publicCard: AgentCard, contribution: AgentCardContribution = {}): AgentCard | undefined {
  const extra = contribution.extendedCard;
  if (extra === undefined) return undefined;
  const merged = create(AgentCardSchema, {
    name: extra.name || publicCard.name,
    description: extra.description || publicCard.description,
    version: extra.version || publicCard.version,
    supportedInterfaces: publicCard.supportedInterfaces,
    provider: extra.provider ?? publicCard.provider,
    documentationUrl: extra.documentationUrl ?? publicCard.documentationUrl,
    iconUrl: extra.iconUrl ?? publicCard.iconUrl,
    capabilities: {
      streaming: publicCard.capabilities?.streaming,
      pushNotifications: publicCard.capabilities?.pushNotifications,
      extendedAgentCard: true,
      extensions: extra.capabilities?.extensions ?? publicCard.capabilities?.extensions ?? [],
    },
    // Same reason as the public card: only schemes that are enforced may be declared (R-CARD-8).
    securitySchemes: publicCard.securitySchemes,
    securityRequirements: publicCard.securityRequirements,
    defaultInputModes: nonEmptyOr(extra.defaultInputModes, publicCard.defaultInputModes),
    defaultOutputModes: nonEmptyOr(extra.defaultOutputModes, publicCard.defaultOutputModes),
    skills: extra.skills && extra.skills.length > 0 ? extra.skills : publicCard.skills,
    // The public card's signatures do not cover this content, so none are carried over.
  });
  // Detach from the public card's nested messages so neither can change the other.
  const detached = clone(AgentCardSchema, merged);
  assertValidAgentCard(detached, "extended agent card");
  return detached;
}

/**
 * GetExtendedAgentCard's decision (R-CAP-3, R-XCARD-1). When authentication is configured the
 * edge has verified the caller before this runs (R-XCARD-2); the content is the same for every
 * authenticated caller.
 */
export function getExtendedAgentCard(card: AgentCard, extended: AgentCard | undefined): AgentCard {
  if (card.capabilities?.extendedAgentCard !== true) {
    throw new UnsupportedOperationError("GetExtendedAgentCard is not supported: the agent card does not declare capabilities.extended_agent_card");
  }
  if (extended === undefined) throw new ExtendedAgentCardNotConfiguredError();
  return extended;
}

/** R-CARD-3: required fields set, required lists non-empty. Throws one error listing every problem. */
export function assertValidAgentCard(card: AgentCard, what = "agent card"): void {
  const problems: string[] = [];
  const need = (ok: unknown, field: string) => {
    if (!ok) problems.push(`${field} is required`);
  };
  need(card.name, "name");
  need(card.description, "description");
  need(card.version, "version");
  need(card.capabilities, "capabilities");
  need(card.supportedInterfaces.length, "supported_interfaces");
  card.supportedInterfaces.forEach((itf, i) => {
    need(itf.url, `supported_interfaces[${i}].url`);
    need(itf.protocolBinding, `supported_interfaces[${i}].protocol_binding`);
    need(itf.protocolVersion, `supported_interfaces[${i}].protocol_version`);
  });
  need(card.defaultInputModes.length, "default_input_modes");
  need(card.defaultOutputModes.length, "default_output_modes");
  need(card.skills.length, "skills");
  card.skills.forEach((skill, i) => {
    need(skill.id, `skills[${i}].id`);
    need(skill.name, `skills[${i}].name`);
    need(skill.description, `skills[${i}].description`);
    need(skill.tags.length, `skills[${i}].tags`);
  });
  if (card.provider) {
    need(card.provider.url, "provider.url");
    need(card.provider.organization, "provider.organization");
  }
  card.capabilities?.extensions.forEach((ext, i) => need(ext.uri, `capabilities.extensions[${i}].uri`));
  if (problems.length > 0) throw new Error(`${what} is invalid (R-CARD-3): ${problems.join("; ")}`);
}

function checkGrpcAddress(address: string): void {
  const match = HOST_PORT.exec(address ?? "");
  const port = match ? Number(match[2]) : 0;
  if (!match || port < 1 || port > 65535) {
    throw new Error(
      `agent card: public gRPC address ${JSON.stringify(address)} must be host:port as clients dial it, ` +
        `without a scheme (e.g. "agent.example.com:443") (A-21)`,
    );
  }
}

function nonEmptyOr(list: readonly string[] | undefined, fallback: readonly string[]): string[] {
  return [...(list && list.length > 0 ? list : fallback)];
}
