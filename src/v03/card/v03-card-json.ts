import type { AgentCard, AgentInterface, AgentSkill } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { toV03SecurityRequirements, toV03SecuritySchemes } from "./security-json.js";

/*
 * The v0.3 view of our v1.0 Agent Card (R-V03-50), as the v0.3 JSON schema shapes it: what a v0.3
 * client reads at /.well-known/agent-card.json (A2A-Version: 0.3) and from
 * agent/getAuthenticatedExtendedCard.
 */

/** protocolVersion of the v0.3 card and of the card's 0.3 interfaces (BQ-20: no patch number, as §3.6). */
export const V03_PROTOCOL_VERSION = "0.3";
/** v0.3's default when a card names no preferred transport (v0.3 §5.6.1). */
const V03_DEFAULT_TRANSPORT = "JSONRPC";

export type V03InterfaceJson = { url: string; transport: string };

/** The v0.3 card's JSON (the fields v0.3 defines; what the v1.0 card lacks is left out). */
export type V03AgentCardJson = Record<string, unknown> & {
  readonly name: string;
  readonly description: string;
  readonly url: string;
  readonly preferredTransport: string;
  readonly additionalInterfaces: V03InterfaceJson[];
  readonly protocolVersion: string;
  readonly version: string;
};

/** The card's 0.3 interfaces in the card's order (the first is the v0.3 card's main one). */
export function v03InterfacesOf(card: AgentCard): AgentInterface[] {
  return card.supportedInterfaces.filter((itf) => itf.protocolVersion === V03_PROTOCOL_VERSION);
}

/**
 * The fields only v0.3 has, as the header-less card also carries them: url and
 * preferredTransport of the first 0.3 interface, every 0.3 interface in additionalInterfaces
 * (the main one included, v0.3 §5.6.2), protocolVersion "0.3".
 */
export function v03InterfaceFields(card: AgentCard): Pick<V03AgentCardJson, "url" | "preferredTransport" | "additionalInterfaces" | "protocolVersion"> {
  const interfaces = v03InterfacesOf(card);
  const main = interfaces[0];
  return {
    url: main?.url ?? "",
    preferredTransport: main?.protocolBinding ?? V03_DEFAULT_TRANSPORT,
    additionalInterfaces: interfaces.map((itf) => ({ url: itf.url, transport: itf.protocolBinding })),
    protocolVersion: V03_PROTOCOL_VERSION,
  };
}

/** The v0.3 JSON card of R-V03-50 made from the v1.0 card. */
export function toV03CardJson(card: AgentCard): V03AgentCardJson {
  const capabilities = card.capabilities;
  const security = toV03SecurityRequirements(card.securityRequirements);
  return {
    name: card.name,
    description: card.description,
    ...v03InterfaceFields(card),
    version: card.version,
    ...(card.provider ? { provider: { organization: card.provider.organization, url: card.provider.url } } : {}),
    ...(card.documentationUrl ? { documentationUrl: card.documentationUrl } : {}),
    ...(card.iconUrl ? { iconUrl: card.iconUrl } : {}),
    capabilities: {
      // stateTransitionHistory is left out: v1.0 has no such capability (R-V03-50).
      ...(capabilities?.streaming !== undefined ? { streaming: capabilities.streaming } : {}),
      ...(capabilities?.pushNotifications !== undefined ? { pushNotifications: capabilities.pushNotifications } : {}),
      ...(capabilities && capabilities.extensions.length > 0
        ? {
            extensions: capabilities.extensions.map((ext) => ({
              uri: ext.uri,
              ...(ext.description ? { description: ext.description } : {}),
              required: ext.required,
              ...(ext.params ? { params: ext.params } : {}),
            })),
          }
        : {}),
    },
    supportsAuthenticatedExtendedCard: capabilities?.extendedAgentCard === true,
    ...(Object.keys(card.securitySchemes).length > 0 ? { securitySchemes: toV03SecuritySchemes(card.securitySchemes) } : {}),
    ...(security.length > 0 ? { security } : {}),
    defaultInputModes: [...card.defaultInputModes],
    defaultOutputModes: [...card.defaultOutputModes],
    skills: card.skills.map(toV03Skill),
    // signatures: a v1.0 signature does not verify over this other document (§8.4), so none is carried.
  };
}

function toV03Skill(skill: AgentSkill): Record<string, unknown> {
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: [...skill.tags],
    ...(skill.examples.length > 0 ? { examples: [...skill.examples] } : {}),
    ...(skill.inputModes.length > 0 ? { inputModes: [...skill.inputModes] } : {}),
    ...(skill.outputModes.length > 0 ? { outputModes: [...skill.outputModes] } : {}),
    ...(skill.securityRequirements.length > 0 ? { security: toV03SecurityRequirements(skill.securityRequirements) } : {}),
  };
}
