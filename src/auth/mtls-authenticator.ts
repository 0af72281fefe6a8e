import type { PeerCertificate } from "node:tls";
import { invalidCredential } from "./auth-error.js";
import type { Authenticator, CredentialSource, Identity } from "./identity.js";

/** Which part of the client certificate names the principal. */
export type MtlsPrincipalSource = "subject" | "san";

const NO_CLAIMS = Object.freeze({});
// C0, DEL and C1: no name holds them, and they would forge log lines and headers.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * mTLS identity: the TLS layer has already checked the client certificate against
 * A2A_TLS_CLIENT_CA; this reads who it names. `subject`: the subject's CN; `san`: the first
 * URI SAN (e.g. a SPIFFE id), else the first DNS SAN, else the first email SAN.
 */
export class MtlsAuthenticator implements Authenticator {
  readonly scheme = "mtls" as const;
  readonly #identities = new Map<string, Identity>();

  constructor(private readonly source: MtlsPrincipalSource) {}

  authenticate(source: CredentialSource): Identity | undefined {
    const cert = peerCertificate(source);
    if (cert === undefined || cert === null || Object.keys(cert).length === 0) return undefined;
    const principal = this.source === "subject" ? subjectCn(cert) : firstSan(cert);
    if (principal === undefined || principal === "" || principal.length > 256) {
      throw invalidCredential(
        "mtls",
        `the client certificate has no usable ${this.source === "subject" ? "subject CN" : "URI, DNS or email SAN"}`,
        `a client certificate whose ${this.source === "subject" ? "subject CN" : "SAN"} names the principal`,
      );
    }
    // A name the certificate's issuer let through may still be no principal: refused, never logged or stored as one.
    if (principal.trim() === "" || CONTROL_CHARS.test(principal)) {
      throw invalidCredential(
        "mtls",
        `the client certificate's ${this.source === "subject" ? "subject CN" : "SAN"} is blank or holds control characters`,
        `a client certificate whose ${this.source === "subject" ? "subject CN" : "SAN"} names the principal in printable characters`,
      );
    }
    let identity = this.#identities.get(principal);
    if (identity === undefined) {
      identity = Object.freeze({ scheme: "mtls", principal, tenants: undefined, scopes: [], claims: NO_CLAIMS });
      if (this.#identities.size >= 10_000) this.#identities.clear(); // bounded; each is cheap to make again
      this.#identities.set(principal, identity);
    }
    return identity;
  }
}

function subjectCn(cert: PeerCertificate): string | undefined {
  const cn = (cert.subject as unknown as Record<string, string | string[] | undefined> | undefined)?.["CN"];
  return Array.isArray(cn) ? cn[0] : cn;
}

function firstSan(cert: PeerCertificate): string | undefined {
  const entries = (cert.subjectaltname ?? "").split(/,\s*/).filter((e) => e !== "");
  for (const type of ["URI:", "DNS:", "email:"]) {
    const hit = entries.find((e) => e.startsWith(type));
    if (hit !== undefined) return hit.slice(type.length);
  }
  return undefined;
}

function peerCertificate(source: CredentialSource): PeerCertificate | undefined {
  try {
    return source.getAuthContext?.().sslPeerCertificate;
  } catch {
    return undefined; // the connection is already gone
  }
}
