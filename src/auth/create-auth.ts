import { readFileSync } from "node:fs";
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
  /** Reads the API key file again; the number of keys, or undefined without API keys. Throws an ApiKeyFileError on a bad file (api-key-authenticator.ts says which keys stay). */
  reloadApiKeys(): number | undefined;
  /** Reads the JWT public key file again: true when the key changed (verified tokens are then forgotten), undefined without one. Throws, keeping the key, on a bad file. */
  reloadJwtKey(): boolean | undefined;
  close(): void;
}

/** The authenticators of `config`, in its order. Throws when a key source cannot be loaded. */
export function createAuth(config: AuthConfig): AuthRuntime {
  if (config.schemes.length === 0) return { callers: undefined, reloadApiKeys: () => undefined, reloadJwtKey: () => undefined, close: () => {} };
  let apiKeys: ApiKeyAuthenticator | undefined;
  let jwt: JwtAuthenticator | undefined;
  const authenticators: Authenticator[] = config.schemes.map((scheme) => {
    if (scheme === "jwt") return (jwt = new JwtAuthenticator(config.jwt!));
    if (scheme === "api-key") return (apiKeys = new ApiKeyAuthenticator(config.apiKeysFile!));
    return new MtlsAuthenticator(config.mtlsPrincipal);
  });
  const callers = new CallerAuthenticator({ authenticators, rpcScopes: config.rpcScopes });
  return {
    callers,
    reloadApiKeys: () => apiKeys?.reload(),
    reloadJwtKey: () => {
      const file = config.jwt?.publicKeyFile;
      if (jwt === undefined || file === undefined) return undefined;
      let pem: Buffer;
      try {
        pem = readFileSync(file);
      } catch (e) {
        throw new Error(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
      }
      return jwt.replacePublicKey(pem);
    },
    close: () => callers.close(),
  };
}
