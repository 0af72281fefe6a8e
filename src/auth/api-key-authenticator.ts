import { readFileSync } from "node:fs";
import { invalidCredential } from "./auth-error.js";
import { hashApiKey, parseApiKeyFile, type ApiKeyEntry } from "./api-key-file.js";
import type { Authenticator, CredentialSource, Identity } from "./identity.js";

/** The metadata key that carries an API key (declared in the card's APIKeySecurityScheme). */
export const API_KEY_HEADER = "x-api-key";
const EXPECTED = `${API_KEY_HEADER}: <key> with a key listed in the server's key file`;
const MAX_KEY_LENGTH = 512;

/**
 * API keys from a file of hashed keys (see api-key-file.ts). `reload()` reads the file again (on
 * SIGHUP); a file that does not parse leaves the keys as they were. Calls check a key by its
 * SHA-256 digest, so the file and the process hold no usable key.
 */
export class ApiKeyAuthenticator implements Authenticator {
  readonly scheme = "api-key" as const;
  #identities = new Map<string, Identity>();

  constructor(private readonly file: string) {
    this.reload();
  }

  /** Reads the key file again; throws (keeping the current keys) when it cannot be read or parsed. */
  reload(): number {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (e) {
      throw new Error(`cannot read ${this.file} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    }
    const entries = parseApiKeyFile(text);
    const identities = new Map<string, Identity>();
    for (const [digest, entry] of entries) identities.set(digest, identityOf(entry));
    this.#identities = identities;
    return identities.size;
  }

  get size(): number {
    return this.#identities.size;
  }

  authenticate(source: CredentialSource): Identity | undefined {
    const values = source.metadata.get(API_KEY_HEADER);
    if (values.length === 0) return undefined;
    const key = values[0];
    if (values.length > 1 || typeof key !== "string")
      throw invalidCredential("api-key", `the call carries more than one ${API_KEY_HEADER} entry, or a binary one`, EXPECTED);
    if (key.length > MAX_KEY_LENGTH) throw invalidCredential("api-key", `the key is longer than ${MAX_KEY_LENGTH} characters`, EXPECTED);
    const identity = this.#identities.get(hashApiKey(key));
    if (identity === undefined) throw invalidCredential("api-key", "the key is not known", EXPECTED);
    return identity;
  }
}

function identityOf(entry: ApiKeyEntry): Identity {
  return Object.freeze({ scheme: "api-key", principal: entry.principal, tenants: entry.tenants, scopes: entry.scopes, claims: Object.freeze({}) });
}
