import type { CallMetadata } from "./call-metadata.js";
import type { PeerCertificate } from "node:tls";

/** What a verified credential proves about its holder. */
export interface Identity {
  /** The scheme that proved it: "jwt", "api-key" or "mtls". */
  readonly scheme: AuthScheme;
  /** Who it is: a JWT's `sub`, an API key's principal, a client certificate's subject or SAN. */
  readonly principal: string;
  /** Tenants it may act in; undefined = any tenant. The first one is used when a request names none. */
  readonly tenants: readonly string[] | undefined;
  /** Scopes it grants (matched against the operator's RPC → scope table). */
  readonly scopes: readonly string[];
  /** A JWT's verified claims; empty for the other schemes. */
  readonly claims: Readonly<Record<string, unknown>>;
  /** When the credential stops being valid (a JWT's exp), ms since the epoch; undefined = no end of its own. */
  readonly expiresAtMs?: number;
  /** Aborted when the credential is withdrawn (its API key left the key file on a reload). */
  readonly revoked?: AbortSignal;
}

export type AuthScheme = "jwt" | "api-key" | "mtls";

/** What an authenticator may look at: the call's metadata and its TLS peer. */
export interface CredentialSource {
  readonly metadata: CallMetadata;
  /** The connection's transport security (grpc-js getAuthContext()): with mTLS, the client certificate. */
  getAuthContext?(): { readonly sslPeerCertificate?: PeerCertificate };
}

/**
 * One way of proving who calls. `authenticate` returns undefined when the call carries no
 * credential of this scheme (the next scheme is tried), an Identity (or its promise) when it
 * carries a valid one, and throws (or rejects with) an AuthError when it carries a bad one.
 */
export interface Authenticator {
  readonly scheme: AuthScheme;
  authenticate(source: CredentialSource): Identity | Promise<Identity> | undefined;
  /** Stops timers and file watchers, if any. */
  close?(): void;
}

/**
 * The owner name of tasks made by callers who are not authenticated (authentication off). No
 * authenticated principal can be it: theirs all carry a scheme prefix (ownerPrincipal).
 */
export const ANONYMOUS_PRINCIPAL = "anonymous";

/**
 * Who owns a task (A-31, issue 33 finding 2): the scheme and, for a JWT, its issuer, before the
 * name, so an API key named `alice`, the JWT subject `alice` and a certificate naming `alice` are
 * three principals, and none of them is `anonymous`. Forms: `apikey:<name>`, `jwt:<iss>#<sub>`,
 * `mtls:<name>`. The issuer's `%` and `#` are escaped so the first `#` always ends it.
 */
export function ownerPrincipal(identity: Pick<Identity, "scheme" | "principal" | "claims">): string {
  return ownerPrefix(identity.scheme, typeof identity.claims["iss"] === "string" ? identity.claims["iss"] : "") + identity.principal;
}

/** What ownerPrincipal puts before the name for `scheme` (and, for JWT, `issuer`). */
export function ownerPrefix(scheme: AuthScheme, issuer = ""): string {
  if (scheme === "jwt") return `jwt:${issuer.replaceAll("%", "%25").replaceAll("#", "%23")}#`;
  return scheme === "api-key" ? "apikey:" : "mtls:";
}

/**
 * The prefix the schema migration gives the owners stored before owners carried their scheme:
 * the prefix of the one scheme configured when the migration runs, since with one scheme every
 * authenticated owner came from it. With several schemes (or none) nobody can tell which one
 * made a row, and a wrong guess would hand tasks to another principal (the flaw fixed here): such
 * rows get LEGACY_OWNER_PREFIX, which no caller has, and README "Authentication" gives the one
 * UPDATE that assigns them. `anonymous` rows stay anonymous.
 */
export function legacyOwnerPrefix(auth: { readonly schemes: readonly AuthScheme[]; readonly jwt?: { readonly issuer: string } | undefined }): string {
  if (auth.schemes.length !== 1) return LEGACY_OWNER_PREFIX;
  return ownerPrefix(auth.schemes[0]!, auth.jwt?.issuer ?? "");
}

/** Owners of rows a migration could not attribute to a scheme (see legacyOwnerPrefix). */
export const LEGACY_OWNER_PREFIX = "legacy:";

/** Until the app says otherwise: owners are left as stored (a store opened without a configuration, as in storage tests). */
let migrationOwnerPrefix = "";

/**
 * Sets what the stores' migrations use for owners stored without a scheme (the app calls it with
 * legacyOwnerPrefix(config.auth) before it opens its store). Process-wide because the stores run
 * their migrations when they open, and only the configuration knows the schemes.
 */
export function useMigrationOwnerPrefix(prefix: string): void {
  migrationOwnerPrefix = prefix;
}

export function migrationOwnerPrefixInUse(): string {
  return migrationOwnerPrefix;
}
