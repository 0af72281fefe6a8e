import type { CallMetadata } from "./face.js";
import { AuthError } from "../auth/auth-error.js";
import type { CallerAuthenticator } from "../auth/caller-authenticator.js";
import type { CredentialSource, Identity } from "../auth/identity.js";
import { LimitExceededError } from "../lifecycle/index.js";
import type { RateLimiter } from "../limits/rate-limiter.js";
import { readVersion, type ReadVersionOptions } from "./service-parameters.js";

/*
 * Admission of an A2A call from its metadata alone, before its request is read (issue 33,
 * finding 1): the version (ruling A-15 keeps it first), then the caller's credentials. A caller
 * without a valid credential costs the server no decoding of what it sent. The proven identity
 * is kept for the call's handler, which then checks only what needs the request (the tenant)
 * and the RPC's scopes (CallerAuthenticator.authorize), without verifying the credential again.
 */

/** The handlers object of createA2AHandlers carries its admission under this key; RunningServer.useHandlers installs it. */
export const CALL_ADMISSION: unique symbol = Symbol("a2a call admission");

/** What admission may look at: the metadata, the TLS peer, and the client's address. */
export interface AdmissionSource extends CredentialSource {
  /** The client's IP address, for the failed-authentication limit. */
  readonly peerAddress: string;
  /** "0.3" when a v0.3 endpoint has checked the version by its own rule (R-V03-2): the v1.0 check is skipped. */
  readonly protocolVersion?: "1.0" | "0.3";
}

export interface CallAdmission {
  /** Checks the version and proves the caller; returns (or resolves to) its identity, throws (or rejects with) the refusal. */
  admit(source: AdmissionSource): Identity | Promise<Identity>;
  /** The identity admit() proved for the call with this metadata; undefined when the call did not pass admission. */
  admitted(metadata: CallMetadata): Identity | undefined;
}

/**
 * Admission by credentials. `failures` (optional) is a token bucket per client address, charged
 * for every refused credential: an address that spent it is refused before its credential is
 * checked, until the bucket refills (R-SEC-6: rate-limit authentication failures).
 */
export class CredentialAdmission implements CallAdmission {
  // Keyed by the metadata object grpc-js hands the handler: a client cannot forge an entry.
  readonly #identities = new WeakMap<CallMetadata, Identity>();

  constructor(
    private readonly auth: CallerAuthenticator,
    private readonly version: ReadVersionOptions,
    private readonly failures: RateLimiter | undefined,
  ) {}

  admit(source: AdmissionSource): Identity | Promise<Identity> {
    if (source.protocolVersion !== "0.3") readVersion(source.metadata, this.version);
    const waitMs = this.failures?.peek(source.peerAddress) ?? 0;
    if (waitMs > 0) {
      throw new LimitExceededError("AUTH_FAILURES_LIMITED", `too many failed authentication attempts from this address; retry in ${waitMs} ms`, waitMs);
    }
    let identity: Identity | Promise<Identity>;
    try {
      identity = this.auth.identify(source);
    } catch (error) {
      throw this.#failed(source, error);
    }
    if (identity instanceof Promise) {
      return identity.then(
        (id) => this.#remember(source.metadata, id),
        (error: unknown) => {
          throw this.#failed(source, error);
        },
      );
    }
    return this.#remember(source.metadata, identity);
  }

  admitted(metadata: CallMetadata): Identity | undefined {
    return this.#identities.get(metadata);
  }

  #remember(metadata: CallMetadata, identity: Identity): Identity {
    this.#identities.set(metadata, identity);
    return identity;
  }

  /** Charges a refused credential to its address (not a server-side failure such as unreachable keys). */
  #failed(source: AdmissionSource, error: unknown): unknown {
    if (error instanceof AuthError && error.kind === "unauthenticated") this.failures?.take(source.peerAddress);
    return error;
  }
}

/** The admission a handlers object carries (see CALL_ADMISSION), if any. */
export function admissionOf(handlers: object): CallAdmission | undefined {
  return (handlers as { readonly [CALL_ADMISSION]?: CallAdmission })[CALL_ADMISSION];
}
