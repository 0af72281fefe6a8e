import { setting, type Setting } from "../settings/setting.js";

/** The authentication settings (README "Authentication"); parsed by auth-config.ts. */
export const AUTH_SETTINGS = {
  auth: setting(
    "A2A_AUTH",
    "auth",
    "(unset: anonymous, loopback only)",
    "Who may call: none, jwt, api-key, mtls, or a comma list tried in that order (jwt,api-key). Unset: anonymous callers, and the server refuses to listen beyond loopback.",
  ),
  jwtPublicKeyFile: setting(
    "A2A_JWT_PUBLIC_KEY_FILE",
    "jwt-public-key-file",
    "(unset)",
    "PEM public key or certificate that verifies bearer JWTs (or use A2A_JWT_JWKS_URL).",
  ),
  jwtJwksUrl: setting(
    "A2A_JWT_JWKS_URL",
    "jwt-jwks-url",
    "(unset)",
    "JWKS URL of the token issuer's signing keys (https; http only to loopback); cached 2 min, refetched for an unknown kid.",
  ),
  jwtIssuer: setting("A2A_JWT_ISSUER", "jwt-issuer", "(required with jwt)", "The iss every token must carry."),
  jwtAudience: setting("A2A_JWT_AUDIENCE", "jwt-audience", "(required with jwt)", "The aud every token must carry."),
  jwtAlgorithms: setting(
    "A2A_JWT_ALGORITHMS",
    "jwt-algorithms",
    "RS256,PS256,ES256,ES384,EdDSA",
    "Signature algorithms accepted (asymmetric only: none and HMAC are always refused).",
  ),
  jwtClockSkewS: setting("A2A_JWT_CLOCK_SKEW_S", "jwt-clock-skew-s", "30", "Clock skew tolerated on exp and nbf, seconds."),
  jwtScopesClaim: setting("A2A_JWT_SCOPES_CLAIM", "jwt-scopes-claim", "scope", "Claim holding the token's scopes (space-separated string or array)."),
  jwtTenantsClaim: setting(
    "A2A_JWT_TENANTS_CLAIM",
    "jwt-tenants-claim",
    "(unset: tokens do not limit tenants)",
    "Claim listing the tenants a token may act in (string or array); a request without a tenant gets the first.",
  ),
  jwtJwksTimeoutMs: setting("A2A_JWT_JWKS_TIMEOUT_MS", "jwt-jwks-timeout-ms", "5000", "Timeout of a JWKS fetch, ms."),
  jwtMaxTokenLifetime: setting(
    "A2A_JWT_MAX_TOKEN_LIFETIME",
    "jwt-max-token-lifetime",
    "24h",
    "Longest lifetime a token may claim (exp - iat, or exp - now without iat), as a duration (1h, 30m); longer-lived tokens are refused.",
  ),
  apiKeysFile: setting(
    "A2A_API_KEYS_FILE",
    "api-keys-file",
    "(unset)",
    "File of hashed API keys, one per line (make lines with `a2a-grpc-server keygen`); reloaded on SIGHUP.",
  ),
  mtlsPrincipal: setting(
    "A2A_MTLS_PRINCIPAL",
    "mtls-principal",
    "subject",
    "What names an mTLS caller: subject (the certificate's subject CN) or san (its first URI, DNS or email SAN).",
  ),
  authScopes: setting(
    "A2A_AUTH_SCOPES",
    "auth-scopes",
    "(unset: no scopes required)",
    "Scopes each RPC needs, RPC=scope pairs: SendMessage=tasks.write,GetTask=tasks.read,*=a2a (* = every other RPC).",
  ),
  authOpenServices: setting(
    "A2A_AUTH_OPEN_SERVICES",
    "auth-open-services",
    "health,reflection",
    "With A2A_AUTH set: which of the gRPC health (grpc.health.v1) and reflection services answer without credentials: health, reflection, both (comma list) or none. The others need a credential like the A2A RPCs. Kubernetes gRPC probes send none: keep health open there.",
  ),
} as const satisfies Record<string, Setting>;
