import type { CallMetadata } from "./call-metadata.js";
import { createPublicKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type FetchImplementation, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { AuthError, invalidCredential } from "./auth-error.js";
import type { Authenticator, CredentialSource, Identity } from "./identity.js";

/** The asymmetric algorithms a public key can verify; the default allow-list. */
export const DEFAULT_JWT_ALGORITHMS: readonly string[] = ["RS256", "PS256", "ES256", "ES384", "EdDSA"];
/** Every algorithm that may be allowed: asymmetric ones only (never `none`, never HMAC with a public key). */
export const ALLOWED_JWT_ALGORITHMS: readonly string[] = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

export interface JwtSettings {
  /** PEM public key (SPKI) or certificate; exactly one of publicKeyPem and jwksUrl. */
  readonly publicKeyPem?: Buffer;
  /** The file publicKeyPem was read from, read again on SIGHUP (create-auth.ts). */
  readonly publicKeyFile?: string;
  readonly jwksUrl?: URL;
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly string[];
  /** Tolerance on exp / nbf, seconds. */
  readonly clockSkewSeconds: number;
  /** Claim listing the scopes: a space-separated string (OAuth `scope`) or an array. */
  readonly scopesClaim: string;
  /** Claim listing the tenants the token may act in (without it: the empty tenant only); undefined = tokens do not restrict tenants. */
  readonly tenantsClaim?: string;
  /** JWKS fetch timeout, ms. */
  readonly jwksTimeoutMs: number;
  /** How long fetched JWKS keys are used before they are fetched again, ms. */
  readonly jwksMaxAgeMs?: number;
  /** Most verified tokens kept (each until it expires, or cacheTtlMs after its check). */
  readonly cacheEntries?: number;
  /** Longest a verified token is trusted without a new check, ms (default 2 min): a removed key stops working by then. */
  readonly cacheTtlMs?: number;
  /** Longest lifetime a token may claim, ms (A2A_JWT_MAX_TOKEN_LIFETIME): exp - iat, or exp - now without iat. */
  readonly maxTokenLifetimeMs?: number;
  readonly now?: () => number;
}

/** Longest token accepted: anything longer is refused before any parsing. */
export const MAX_TOKEN_LENGTH = 16 * 1024;
const DEFAULT_CACHE_ENTRIES = 10_000;
const DEFAULT_CACHE_TTL_MS = 2 * 60_000;
/** How long fetched JWKS keys are used before they are fetched again: a withdrawn key stops verifying by then. */
const DEFAULT_JWKS_MAX_AGE_MS = 2 * 60_000;
/** A2A_JWT_MAX_TOKEN_LIFETIME's default: a day, longer than any access token an issuer should mint. */
export const DEFAULT_MAX_TOKEN_LIFETIME_MS = 24 * 3_600_000;
const EXPECTED = "authorization: Bearer <JWT>";

interface CachedToken {
  readonly identity: Identity;
  /** Until when the check holds: the token's exp, or cacheTtlMs after the check if sooner; ms since the epoch. */
  readonly trustedUntilMs: number;
}

/**
 * Bearer JWTs (RFC 6750 in the `authorization` metadata), verified with jose against a PEM key
 * or a JWKS: signature, allowed algorithm, issuer, audience, expiry (with a small skew), and a
 * `sub`, and a lifetime (exp - iat) no longer than maxTokenLifetimeMs. A verified token is cached,
 * so a client that reuses its token pays the signature check rarely; but only for cacheTtlMs at
 * most, and the cache is emptied when the JWKS comes back with other keys, so a key the issuer
 * withdrew stops verifying within minutes (bounded: the oldest entry goes when the cache is full).
 */
export class JwtAuthenticator implements Authenticator {
  readonly scheme = "jwt" as const;
  #key: KeyObject | JWTVerifyGetKey;
  readonly #cache = new Map<string, CachedToken>();
  readonly #cacheEntries: number;
  readonly #cacheTtlMs: number;
  readonly #maxLifetimeMs: number;
  readonly #now: () => number;
  /** The key set last fetched from the JWKS, as compared text. */
  #jwksKeys: string | undefined;
  #verifications = 0;
  /** Bumped whenever the keys change: a check begun under other keys is not cached. */
  #keyGeneration = 0;

  constructor(private readonly settings: JwtSettings) {
    this.#cacheEntries = settings.cacheEntries ?? DEFAULT_CACHE_ENTRIES;
    this.#cacheTtlMs = settings.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS;
    this.#maxLifetimeMs = settings.maxTokenLifetimeMs ?? DEFAULT_MAX_TOKEN_LIFETIME_MS;
    this.#now = settings.now ?? Date.now;
    if (settings.publicKeyPem !== undefined) {
      this.#key = publicKeyFromPem(settings.publicKeyPem);
    } else if (settings.jwksUrl !== undefined) {
      this.#key = createRemoteJWKSet(settings.jwksUrl, {
        timeoutDuration: settings.jwksTimeoutMs,
        cacheMaxAge: settings.jwksMaxAgeMs ?? DEFAULT_JWKS_MAX_AGE_MS,
        cooldownDuration: 30_000,
        [customFetch]: (url, options) => this.#fetchJwks(url, options),
      });
    } else {
      throw new Error("a JWT authenticator needs a public key or a JWKS URL");
    }
  }

  authenticate(source: CredentialSource): Identity | Promise<Identity> | undefined {
    const token = bearerToken(source.metadata);
    if (token === undefined) return undefined;
    const cached = this.#cache.get(token);
    if (cached !== undefined) {
      if (this.#now() < cached.trustedUntilMs) return cached.identity;
      this.#cache.delete(token);
    }
    return this.#verify(token);
  }

  /** Tokens held by the cache (for tests and the benchmark). */
  get cachedTokens(): number {
    return this.#cache.size;
  }

  /** Signature checks made so far (for tests: a cached token costs none). */
  get verifications(): number {
    return this.#verifications;
  }

  /**
   * Puts a new PEM key in force (the key file was read again); verified tokens are forgotten when
   * it differs from the key in force. Throws, keeping the key, when the PEM is not a public key.
   */
  replacePublicKey(pem: Buffer): boolean {
    const next = publicKeyFromPem(pem);
    const current = this.#key;
    if (typeof current !== "function" && current.equals(next)) return false;
    this.#key = next;
    this.#forgetVerified();
    return true;
  }

  /** jose's JWKS fetch, watched: a key set unlike the last one empties the token cache before jose sees it. */
  async #fetchJwks(url: string, options: Parameters<FetchImplementation>[1]): Promise<Response> {
    const response = await fetch(url, options);
    if (!response.ok) return response;
    const body = await response.text();
    const keys = keySetText(body);
    if (keys !== undefined) {
      if (this.#jwksKeys !== undefined && keys !== this.#jwksKeys) this.#forgetVerified();
      this.#jwksKeys = keys;
    }
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  #forgetVerified(): void {
    this.#keyGeneration++;
    this.#cache.clear();
  }

  async #verify(token: string): Promise<Identity> {
    const s = this.settings;
    this.#verifications++;
    const generation = this.#keyGeneration;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#key as KeyObject, {
        issuer: s.issuer,
        audience: s.audience,
        algorithms: [...s.algorithms],
        clockTolerance: s.clockSkewSeconds,
        requiredClaims: ["exp", "sub"],
        currentDate: new Date(this.#now()),
      }));
    } catch (error) {
      throw this.#refusal(error);
    }
    this.#checkLifetime(payload);
    const identity = this.#identity(payload);
    if (generation !== this.#keyGeneration) return identity; // checked against keys since replaced: answer, but keep nothing
    if (this.#cache.size >= this.#cacheEntries) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(token, { identity, trustedUntilMs: Math.min(payload.exp! * 1000, this.#now() + this.#cacheTtlMs) });
    return identity;
  }

  /** A token that claims to hold longer than the operator allows is refused, whatever its signature (a year 9999 exp). */
  #checkLifetime(payload: JWTPayload): void {
    const from = typeof payload.iat === "number" ? payload.iat * 1000 : this.#now();
    if (payload.exp! * 1000 - from > this.#maxLifetimeMs) {
      const limit = `${Math.round(this.#maxLifetimeMs / 1000)} s`;
      throw invalidCredential(
        "jwt",
        `the token's lifetime (exp - iat) is longer than this server accepts (${limit})`,
        `a token whose exp is at most ${limit} after its iat`,
      );
    }
  }

  #identity(payload: JWTPayload): Identity {
    const sub = payload.sub!;
    if (typeof sub !== "string" || sub.trim() === "") throw invalidCredential("jwt", "the sub claim is empty; it must name the principal", EXPECTED);
    if (sub.length > 256 || /[\u0000-\u001f\u007f]/.test(sub))
      throw invalidCredential("jwt", "the sub claim is longer than 256 characters or holds control characters", EXPECTED);
    const tenantsClaim = this.settings.tenantsClaim;
    return {
      scheme: "jwt",
      principal: sub,
      expiresAtMs: payload.exp! * 1000,
      // A token without the claim may act in the default (empty) tenant only.
      tenants: tenantsClaim === undefined ? undefined : (stringList(payload[tenantsClaim], "tenants", tenantsClaim) ?? [""]),
      scopes: stringList(payload[this.settings.scopesClaim], "scopes", this.settings.scopesClaim) ?? [],
      claims: Object.freeze({ ...payload }),
    };
  }

  #refusal(error: unknown): AuthError {
    const s = this.settings;
    if (error instanceof AuthError) return error;
    if (error instanceof errors.JWTExpired) return invalidCredential("jwt", "the token has expired", `${EXPECTED} with an exp in the future`);
    if (error instanceof errors.JWTClaimValidationFailed) {
      const expected: Record<string, string> = {
        iss: `iss "${s.issuer}"`,
        aud: `aud "${s.audience}"`,
        nbf: "an nbf in the past",
        sub: "a sub claim",
        exp: "an exp claim",
      };
      return invalidCredential("jwt", `the ${error.claim} claim is missing or not accepted`, expected[error.claim] ?? `${EXPECTED} with valid claims`);
    }
    if (error instanceof errors.JOSEAlgNotAllowed)
      return invalidCredential("jwt", "the token's algorithm is not allowed", `a token signed with one of ${s.algorithms.join(", ")}`);
    if (error instanceof errors.JWSSignatureVerificationFailed)
      return invalidCredential("jwt", "the signature does not verify", "a token signed by the configured issuer's key");
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
      return invalidCredential("jwt", "no signing key of the issuer matches the token", "a token signed by a key in the configured JWKS");
    }
    if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || isFetchFailure(error)) {
      return new AuthError(
        "unavailable",
        "SIGNING_KEYS_UNAVAILABLE",
        "the server could not fetch the issuer's signing keys to check the token; try again later",
        { scheme: "jwt" },
      );
    }
    return invalidCredential("jwt", "the token is malformed", `${EXPECTED} (a signed compact JWS)`);
  }
}

/** The token of `authorization: Bearer <token>`; undefined when there is no authorization entry; throws when it is malformed. */
export function bearerToken(metadata: CallMetadata): string | undefined {
  const values = metadata.get("authorization");
  if (values.length === 0) return undefined;
  const value = values[0];
  if (values.length > 1 || typeof value !== "string")
    throw invalidCredential("jwt", "the call carries more than one authorization entry, or a binary one", EXPECTED);
  if (value.length > MAX_TOKEN_LENGTH + 7) throw invalidCredential("jwt", `the authorization entry is longer than ${MAX_TOKEN_LENGTH} characters`, EXPECTED);
  const match = /^bearer +([A-Za-z0-9_.~+/=-]+) *$/i.exec(value);
  if (!match) throw invalidCredential("jwt", "the authorization entry is not a Bearer token", EXPECTED);
  return match[1]!;
}

function publicKeyFromPem(pem: Buffer): KeyObject {
  if (/PRIVATE KEY/.test(pem.toString("latin1"))) throw new Error("the file holds a private key; give the public key (or certificate) only");
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new Error("not a PEM public key or certificate");
  }
  if (key.type !== "public") throw new Error("not a public key");
  return key;
}

function stringList(value: unknown, what: string, claim: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value.split(" ").filter((s) => s !== "");
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as string[];
  throw invalidCredential(
    "jwt",
    `the ${claim} claim (${what}) is neither a string nor a list of strings`,
    `${claim} as a space-separated string or an array of strings`,
  );
}

/** Node's fetch rejects with a TypeError "fetch failed" (by name: it may come from another realm). */
function isFetchFailure(error: unknown): boolean {
  return (error as Error | undefined)?.name === "TypeError" && /fetch/i.test((error as Error).message);
}

/** A JWKS document's keys in a canonical order, to tell a changed key set; undefined when it is not a JWKS. */
function keySetText(body: string): string | undefined {
  try {
    const keys = (JSON.parse(body) as { keys?: unknown }).keys;
    if (!Array.isArray(keys)) return undefined;
    return keys
      .map((k) => JSON.stringify(Object.entries(k as object).sort(([a], [b]) => (a < b ? -1 : 1))))
      .sort()
      .join("\n");
  } catch {
    return undefined;
  }
}
