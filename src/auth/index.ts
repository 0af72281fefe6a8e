/**
 * Authentication and authorization at the edge (README "Authentication", rulings,
 * who calls, proven once per RPC in the handler's begin(), handed to the core as a Caller.
 *
 * - createAuth(config): the configured authenticators (JWT, API keys, mTLS) behind one
 *   CallerAuthenticator, and the API key file's reload;
 * - loadAuthConfig: the settings, with the secure default (anonymous only on loopback);
 * - cardSecurity: the card's security_schemes / security_requirements from the same config;
 * - runKeygen: the `keygen` command that makes an API key and its hashed line;
 * - AuthError: why a call was not let in (error-status.ts maps it).
 */
export { loadAuthConfig, isLoopbackOnly, type AuthConfig } from "./auth-config.js";
export { AuthError, AUTH_ERROR_DOMAIN } from "./auth-error.js";
export { createAuth, type AuthRuntime } from "./create-auth.js";
export { CallerAuthenticator } from "./caller-authenticator.js";
export { cardSecurity, SCHEME_NAMES } from "./security-card.js";
export { runKeygen, KEYGEN_USAGE } from "./keygen-command.js";
export { API_KEY_HEADER } from "./api-key-authenticator.js";
export { apiKeyLine, hashApiKey, newApiKey, parseApiKeyFile } from "./api-key-file.js";
export { JwtAuthenticator, DEFAULT_JWT_ALGORITHMS } from "./jwt-authenticator.js";
export type { AuthScheme, Identity, Authenticator, CredentialSource } from "./identity.js";
export { ANONYMOUS_PRINCIPAL, LEGACY_OWNER_PREFIX, legacyOwnerPrefix, ownerPrincipal, useMigrationOwnerPrefix } from "./identity.js";
export { ApiKeyFileError, readApiKeyFile } from "./api-key-file.js";
export { runKeysCommand, KEYS_USAGE } from "./keys-command.js";
