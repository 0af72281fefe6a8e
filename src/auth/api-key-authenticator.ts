import { setMaxListeners } from "node:events";
import { invalidCredential } from "./auth-error.js";
import { digestsMentioned, hashApiKey, parseApiKeyFileAt, readApiKeyFileText, type ApiKeyEntry } from "./api-key-file.js";
import type { Authenticator, CredentialSource, Identity } from "./identity.js";

/** The metadata key that carries an API key (declared in the card's APIKeySecurityScheme). */
export const API_KEY_HEADER = "x-api-key";
const EXPECTED = `${API_KEY_HEADER}: <key> with a key listed in the server's key file`;
const MAX_KEY_LENGTH = 512;

/**
 * API keys from a file of hashed keys (see api-key-file.ts). `reload()` reads the file again (on
 * SIGHUP); a file that does not parse throws and leaves the keys as they were (the caller says so
 * loudly: create-auth.ts). A key that leaves the file, or whose entry changes, is revoked: the
 * streams it opened end (credential-watch.ts). Calls check a key by its SHA-256 digest, so the
 * file and the process hold no usable key.
 */
export class ApiKeyAuthenticator implements Authenticator {
  readonly scheme = "api-key" as const;
  #keys = new Map<string, ActiveKey>();

  constructor(private readonly file: string) {
    this.reload();
  }

  /**
   * Reads the key file again. When it cannot be read or parsed this throws an ApiKeyFileError
   * and keeps the keys in force, except those whose digest the file no longer mentions at all:
   * a typo must not lock every client out, nor keep alive a key the operator deleted.
   */
  reload(): number {
    const text = readApiKeyFileText(this.file);
    let entries: Map<string, ApiKeyEntry>;
    try {
      entries = parseApiKeyFileAt(this.file, text);
    } catch (error) {
      const mentioned = digestsMentioned(text);
      this.#replace(new Map([...this.#keys].filter(([digest]) => mentioned.has(digest))));
      throw error;
    }
    const keys = new Map<string, ActiveKey>();
    for (const [digest, entry] of entries) {
      const kept = this.#keys.get(digest);
      keys.set(digest, kept !== undefined && sameEntry(kept.entry, entry) ? kept : activeKey(entry));
    }
    this.#replace(keys);
    return keys.size;
  }

  /** Puts `keys` in force; the keys left out or changed are revoked. */
  #replace(keys: Map<string, ActiveKey>): void {
    const old = this.#keys;
    this.#keys = keys;
    for (const [digest, key] of old) if (keys.get(digest) !== key) key.revoke.abort();
  }

  get size(): number {
    return this.#keys.size;
  }

  authenticate(source: CredentialSource): Identity | undefined {
    const values = source.metadata.get(API_KEY_HEADER);
    if (values.length === 0) return undefined;
    const key = values[0];
    if (values.length > 1 || typeof key !== "string")
      throw invalidCredential("api-key", `the call carries more than one ${API_KEY_HEADER} entry, or a binary one`, EXPECTED);
    if (key.length > MAX_KEY_LENGTH) throw invalidCredential("api-key", `the key is longer than ${MAX_KEY_LENGTH} characters`, EXPECTED);
    const known = this.#keys.get(hashApiKey(key));
    if (known === undefined) throw invalidCredential("api-key", "the key is not known", EXPECTED);
    return known.identity;
  }
}

/** A key in force: its entry, the identity it proves, and what revokes that identity's streams. */
interface ActiveKey {
  readonly entry: ApiKeyEntry;
  readonly identity: Identity;
  readonly revoke: AbortController;
}

function activeKey(entry: ApiKeyEntry): ActiveKey {
  const revoke = new AbortController();
  setMaxListeners(0, revoke.signal); // one listener per open stream of the key: thousands are normal
  const identity: Identity = Object.freeze({
    scheme: "api-key",
    principal: entry.principal,
    tenants: entry.tenants,
    scopes: entry.scopes,
    claims: Object.freeze({}),
    revoked: revoke.signal,
  });
  return { entry, identity, revoke };
}

function sameEntry(a: ApiKeyEntry, b: ApiKeyEntry): boolean {
  const list = (l: readonly string[] | undefined) => (l === undefined ? "*" : JSON.stringify(l));
  return a.principal === b.principal && list(a.tenants) === list(b.tenants) && list(a.scopes) === list(b.scopes);
}
