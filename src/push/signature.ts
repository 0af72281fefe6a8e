import { createHmac, createPublicKey, sign, type KeyObject } from "node:crypto";

/**
 * Standard Webhooks headers (https://www.standardwebhooks.com, ruling A-29): `webhook-id` (the
 * same on every attempt of one event, so receivers can de-duplicate), `webhook-timestamp`
 * (seconds) and, when signing, `webhook-signature` over `id.timestamp.body`:
 * - `v1a,` + base64 Ed25519 signature, made with the server's private key (the default): every
 *   receiver verifies with the server's public key and none can forge (issue 33 finding 5);
 * - `v1,` + base64 HMAC-SHA256, keyed with the secret of the task's tenant, derived from the
 *   operator's root secret (A2A_PUSH_SIGNING_SECRET): one tenant's receiver cannot sign for another.
 */
export interface WebhookSignatureHeaders {
  readonly "webhook-id": string;
  readonly "webhook-timestamp": string;
  readonly "webhook-signature"?: string;
}

/** Makes the `webhook-signature` value of one request, for the tenant of the task it is about. */
export interface WebhookSigner {
  sign(signedContent: string, tenant: string): string;
}

const SECRET_PREFIX = "whsec_";
const PUBLIC_KEY_PREFIX = "whpk_";

/** The key bytes of a `whsec_<base64>` secret; throws a plain Error saying what is expected. */
export function parseSigningSecret(value: string): Buffer {
  const base64 = value.startsWith(SECRET_PREFIX) ? value.slice(SECRET_PREFIX.length) : undefined;
  const key = base64 !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(base64) ? Buffer.from(base64, "base64") : undefined;
  if (key === undefined || key.length < 24 || key.length > 64) {
    throw new Error("expected whsec_ followed by 24 to 64 random bytes in base64 (e.g. whsec_$(openssl rand -base64 32))");
  }
  return key;
}

/** Ed25519 (`v1a`): the server's private key signs; receivers verify with `publicKey`. */
export class Ed25519Signer implements WebhookSigner {
  /** The public key as Standard Webhooks writes it: `whpk_` + base64 of its 32 raw bytes. */
  readonly publicKey: string;
  /** The same key as PEM (SubjectPublicKeyInfo), for libraries that import PEM. */
  readonly publicKeyPem: string;

  constructor(private readonly privateKey: KeyObject) {
    if (privateKey.asymmetricKeyType !== "ed25519") throw new Error("the push signing key is not an Ed25519 private key");
    const jwk = privateKey.export({ format: "jwk" }) as { x: string };
    this.publicKey = `${PUBLIC_KEY_PREFIX}${Buffer.from(jwk.x, "base64url").toString("base64")}`;
    this.publicKeyPem = createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString();
  }

  sign(signedContent: string): string {
    return `v1a,${sign(null, Buffer.from(signedContent), this.privateKey).toString("base64")}`;
  }
}

/** HMAC-SHA256 (`v1`) with one secret per tenant, derived from the root secret. */
export class TenantHmacSigner implements WebhookSigner {
  private readonly secrets = new Map<string, Buffer>();

  constructor(private readonly rootSecret: Buffer) {}

  sign(signedContent: string, tenant: string): string {
    let secret = this.secrets.get(tenant);
    if (secret === undefined) {
      secret = tenantSigningSecret(this.rootSecret, tenant);
      if (this.secrets.size >= 1024) this.secrets.clear(); // bounded; derived again on demand
      this.secrets.set(tenant, secret);
    }
    return `v1,${createHmac("sha256", secret).update(signedContent).digest("base64")}`;
  }
}

/**
 * A tenant's HMAC secret: HMAC-SHA256 of the tenant name under the root secret (a one-way
 * derivation: knowing one tenant's secret tells nothing of the root's, nor of another tenant's).
 */
export function tenantSigningSecret(rootSecret: Buffer, tenant: string): Buffer {
  return createHmac("sha256", rootSecret).update(`a2a-grpc-server push tenant secret\u0000${tenant}`).digest();
}

/** The tenant's secret as its receiver is given it (`a2a-grpc-server push tenant-secret`). */
export function formatSigningSecret(secret: Buffer): string {
  return `${SECRET_PREFIX}${secret.toString("base64")}`;
}

export function signatureHeaders(id: string, timestampSeconds: number, body: string, signer: WebhookSigner | undefined, tenant = ""): WebhookSignatureHeaders {
  const timestamp = String(timestampSeconds);
  if (signer === undefined) return { "webhook-id": id, "webhook-timestamp": timestamp };
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signer.sign(`${id}.${timestamp}.${body}`, tenant) };
}
