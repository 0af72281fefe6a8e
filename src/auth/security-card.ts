import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AgentCardSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AuthConfig } from "./auth-config.js";
import { API_KEY_HEADER } from "./api-key-authenticator.js";
import type { AuthScheme } from "./identity.js";

type CardInit = MessageInitShape<typeof AgentCardSchema>;
export type CardSecurity = Pick<CardInit, "securitySchemes" | "securityRequirements">;

/** The names the card gives each scheme (keys of security_schemes). */
export const SCHEME_NAMES: Readonly<Record<AuthScheme, string>> = { jwt: "bearer", "api-key": "apiKey", mtls: "mtls" };

/**
 * The card's security_schemes and security_requirements, made from the same AuthConfig the
 * edge enforces (A-30, R-CARD-8), so the two cannot drift. Each scheme is one alternative
 * requirement (any one of them lets a caller in), listing the scopes every RPC without a
 * table entry of its own needs; the per-RPC table is in each scheme's description.
 * Anonymous access declares nothing.
 */
export function cardSecurity(auth: AuthConfig): CardSecurity {
  if (auth.schemes.length === 0) return { securitySchemes: {}, securityRequirements: [] };
  const scopes = auth.rpcScopes.empty ? "" : ` Scopes per RPC: ${auth.rpcScopes.describe()}.`;
  const securitySchemes: NonNullable<CardSecurity["securitySchemes"]> = {};
  for (const scheme of auth.schemes) {
    if (scheme === "jwt") {
      const jwt = auth.jwt!;
      securitySchemes[SCHEME_NAMES.jwt] = {
        scheme: {
          case: "httpAuthSecurityScheme",
          value: {
            scheme: "Bearer",
            bearerFormat: "JWT",
            description: `A JWT in the authorization metadata, issued by ${jwt.issuer} for audience ${jwt.audience}, signed with ${jwt.algorithms.join(", ")}.${scopes}`,
          },
        },
      };
    } else if (scheme === "api-key") {
      securitySchemes[SCHEME_NAMES["api-key"]] = {
        scheme: {
          case: "apiKeySecurityScheme",
          value: { location: "header", name: API_KEY_HEADER, description: `An API key in the ${API_KEY_HEADER} metadata.${scopes}` },
        },
      };
    } else {
      securitySchemes[SCHEME_NAMES.mtls] = {
        scheme: {
          case: "mtlsSecurityScheme",
          value: {
            description: `A TLS client certificate; its ${auth.mtlsPrincipal === "san" ? "first URI, DNS or email SAN" : "subject CN"} names the caller.${scopes}`,
          },
        },
      };
    }
  }
  const list = [...auth.rpcScopes.defaultScopes];
  return {
    securitySchemes,
    securityRequirements: auth.schemes.map((scheme) => ({ schemes: { [SCHEME_NAMES[scheme]]: { list } } })),
  };
}
