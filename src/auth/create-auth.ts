import type { AuthConfig } from "./auth-config.js";
import { ApiKeyAuthenticator } from "./api-key-authenticator.js";
import { CallerAuthenticator } from "./caller-authenticator.js";
import type { Authenticator } from "./identity.js";
import { JwtAuthenticator } from "./jwt-authenticator.js";
import { MtlsAuthenticator } from "./mtls-authenticator.js";

/** Authentication as running: what the edge calls, and the API key file's reload (SIGHUP). */
export interface AuthRuntime {
  /** undefined = every caller is anonymous. */
  readonly callers: CallerAuthenticator | undefined;
  /** Reads the API key file again; the number of keys, or undefined without API keys. Throws (keeping the old keys) on a bad file. */
  reloadApiKeys(): number | undefined;
  close(): void;
}

/** The authenticators of `config`, in its order. Throws when a key source cannot be loaded. */
export function createAuth(config: AuthConfig): AuthRuntime {
  if (config.schemes.length === 0) return { callers: undefined, reloadApiKeys: () => undefined, close: () => {} };
  let apiKeys: ApiKeyAuthenticator | undefined;
  const authenticators: Authenticator[] = config.schemes.map((scheme) => {
    if (scheme === "jwt") return new JwtAuthenticator(config.jwt!);
    if (scheme === "api-key") return (apiKeys = new ApiKeyAuthenticator(config.apiKeysFile!));
    return new MtlsAuthenticator(config.mtlsPrincipal);
  });
  const callers = new CallerAuthenticator({ authenticators, rpcScopes: config.rpcScopes });
  return {
    callers,
    reloadApiKeys: () => apiKeys?.reload(),
    close: () => callers.close(),
  };
}
