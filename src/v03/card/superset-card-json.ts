import { toJson, type JsonObject } from "@bufbuild/protobuf";
import { AgentCardSchema, type AgentCard } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { toV03SecurityRequirements, toV03SecurityScheme } from "./security-json.js";
import { v03InterfaceFields } from "./v03-card-json.js";

/*
 * The card served without A2A-Version (A-37): both generations read it. It is the v1.0 ProtoJSON
 * card with v0.3's fields added beside it, where the names do not collide: url,
 * preferredTransport, additionalInterfaces, protocolVersion, supportsAuthenticatedExtendedCard,
 * and `security` (v1.0 names it securityRequirements). The one field both generations name alike
 * but shape differently, securitySchemes, carries both shapes in each entry: v0.3's `type`
 * discriminator with its OpenAPI fields, and v1.0's oneof member. No key is shared between the
 * two (v0.3: type, in, name, scheme, bearerFormat, flows, openIdConnectUrl, oauth2MetadataUrl,
 * description; v1.0: apiKeySecurityScheme, ...), so a v1.0 parser that ignores unknown fields
 * reads exactly the v1.0 card, and a v0.3 parser finds its `type` (docs/protocol-decisions.md).
 */

/** The header-less card's JSON, for a card that lists 0.3 interfaces (without them the v1.0 ProtoJSON is served: cardJsonForms). */
export function toSupersetCardJson(card: AgentCard): JsonObject {
  const v10 = toJson(AgentCardSchema, card) as JsonObject;
  const security = toV03SecurityRequirements(card.securityRequirements);
  const superset: JsonObject = {
    ...v10,
    ...v03InterfaceFields(card),
    supportsAuthenticatedExtendedCard: card.capabilities?.extendedAgentCard === true,
    ...(security.length > 0 ? { security } : {}),
  };
  if (v10.securitySchemes !== undefined) superset.securitySchemes = bothShapes(card, v10.securitySchemes as JsonObject);
  if (Array.isArray(v10.skills)) superset.skills = v10.skills.map((skill, i) => withV03Security(skill as JsonObject, card.skills[i]!));
  return superset;
}

/** Each entry as `{type, <v0.3 fields>, <v1.0 oneof member>}`; the type first, as v0.3 readers look for it. */
function bothShapes(card: AgentCard, v10Schemes: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [name, v10] of Object.entries(v10Schemes)) {
    const scheme = card.securitySchemes[name];
    const v03 = scheme && toV03SecurityScheme(scheme);
    out[name] = v03 === undefined ? v10 : ({ ...v03, ...(v10 as JsonObject) } as JsonObject);
  }
  return out;
}

function withV03Security(skill: JsonObject, source: AgentCard["skills"][number]): JsonObject {
  if (source.securityRequirements.length === 0) return skill;
  return { ...skill, security: toV03SecurityRequirements(source.securityRequirements) };
}
