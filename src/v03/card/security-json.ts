import type { OAuthFlows, SecurityRequirement, SecurityScheme } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/*
 * Security in the v0.3 card's JSON (the OpenAPI form of the v0.3 JSON schema, R-V03-50): a scheme
 * is discriminated by `type` (v1.0 uses the oneof member's name), a requirement is
 * `{name: [scopes]}` (v1.0: `{schemes: {name: {list: [scopes]}}}`).
 */

export type V03SecuritySchemeJson = Record<string, unknown> & { readonly type: string };
export type V03SecurityRequirementJson = Record<string, string[]>;

/** One v1.0 scheme in the v0.3 form; undefined for a scheme without a kind (nothing to declare). */
export function toV03SecurityScheme(scheme: SecurityScheme): V03SecuritySchemeJson | undefined {
  const { case: kind, value } = scheme.scheme;
  const description = value?.description ? { description: value.description } : {};
  switch (kind) {
    case "apiKeySecurityScheme":
      return { type: "apiKey", in: value.location, name: value.name, ...description };
    case "httpAuthSecurityScheme":
      return { type: "http", scheme: value.scheme, ...(value.bearerFormat ? { bearerFormat: value.bearerFormat } : {}), ...description };
    case "oauth2SecurityScheme":
      return {
        type: "oauth2",
        flows: toV03Flows(value.flows),
        ...(value.oauth2MetadataUrl ? { oauth2MetadataUrl: value.oauth2MetadataUrl } : {}),
        ...description,
      };
    case "openIdConnectSecurityScheme":
      return { type: "openIdConnect", openIdConnectUrl: value.openIdConnectUrl, ...description };
    case "mtlsSecurityScheme":
      return { type: "mutualTLS", ...description };
    default:
      return undefined;
  }
}

/** Every scheme of a card in the v0.3 form, by name (schemes without a kind left out). */
export function toV03SecuritySchemes(schemes: Readonly<Record<string, SecurityScheme>>): Record<string, V03SecuritySchemeJson> {
  const out: Record<string, V03SecuritySchemeJson> = {};
  for (const [name, scheme] of Object.entries(schemes)) {
    const v03 = toV03SecurityScheme(scheme);
    if (v03 !== undefined) out[name] = v03;
  }
  return out;
}

export function toV03SecurityRequirements(requirements: readonly SecurityRequirement[]): V03SecurityRequirementJson[] {
  return requirements.map((requirement) => Object.fromEntries(Object.entries(requirement.schemes).map(([name, scopes]) => [name, [...scopes.list]])));
}

/**
 * v0.3 names the same four flows as v1.0 minus the device-code flow, which it lacks (lossy,
 * R-V03-37: a card whose only flow is device code shows v0.3 clients an empty `flows`).
 */
function toV03Flows(flows: OAuthFlows | undefined): Record<string, unknown> {
  const flow = flows?.flow;
  if (flow === undefined || flow.case === undefined || flow.case === "deviceCode") return {};
  const { value } = flow;
  const urls: Record<string, string> = {};
  if ("authorizationUrl" in value) urls.authorizationUrl = value.authorizationUrl;
  if ("tokenUrl" in value) urls.tokenUrl = value.tokenUrl;
  if (value.refreshUrl) urls.refreshUrl = value.refreshUrl;
  return { [flow.case]: { ...urls, scopes: { ...value.scopes } } };
}
