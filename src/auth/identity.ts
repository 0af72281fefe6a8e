import type * as grpc from "@grpc/grpc-js";
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
}

export type AuthScheme = "jwt" | "api-key" | "mtls";

/** What an authenticator may look at: the call's metadata and its TLS peer. */
export interface CredentialSource {
  readonly metadata: grpc.Metadata;
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
