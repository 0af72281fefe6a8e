import { createHmac } from "node:crypto";

/**
 * Standard Webhooks headers (https://www.standardwebhooks.com, ruling A-29): `webhook-id` (the
 * same on every attempt of one event, so receivers can de-duplicate), `webhook-timestamp`
 * (seconds) and, with a signing secret, `webhook-signature`: `v1,` + base64 HMAC-SHA256 of
 * `id.timestamp.body` keyed with the secret's bytes.
 */
export interface WebhookSignatureHeaders {
  readonly "webhook-id": string;
  readonly "webhook-timestamp": string;
  readonly "webhook-signature"?: string;
}

const SECRET_PREFIX = "whsec_";

/** The key bytes of a `whsec_<base64>` secret; throws a plain Error saying what is expected. */
export function parseSigningSecret(value: string): Buffer {
  const base64 = value.startsWith(SECRET_PREFIX) ? value.slice(SECRET_PREFIX.length) : undefined;
  const key = base64 !== undefined && /^[A-Za-z0-9+/]+={0,2}$/.test(base64) ? Buffer.from(base64, "base64") : undefined;
  if (key === undefined || key.length < 24 || key.length > 64) {
    throw new Error("expected whsec_ followed by 24 to 64 random bytes in base64 (e.g. whsec_$(openssl rand -base64 32))");
  }
  return key;
}

export function signatureHeaders(id: string, timestampSeconds: number, body: string, key: Buffer | undefined): WebhookSignatureHeaders {
  const timestamp = String(timestampSeconds);
  if (key === undefined) return { "webhook-id": id, "webhook-timestamp": timestamp };
  const signature = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}
