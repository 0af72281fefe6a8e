import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Ed25519Signer, TenantHmacSigner, type WebhookSigner } from "./signature.js";

/** Where the server keeps the Ed25519 key it made, in the data directory. */
export const SIGNING_KEY_FILE_NAME = "push-signing-key.pem";

export interface SignerSource {
  /** Absolute data directory (A2A_DATA_DIR). */
  readonly dataDir: string;
  /** The store outlives the process (sqlite, postgres): a key made here is kept in the data directory. */
  readonly durable: boolean;
}

/**
 * The signer A2A_PUSH_SIGNING names (issue 33 finding 5): Ed25519 with the key of
 * A2A_PUSH_SIGNING_KEY_FILE, else the one kept in the data directory (made on first start, file
 * 0600); a memory store, which keeps nothing past the process, gets a key for the process only.
 * HMAC derives one secret per tenant from A2A_PUSH_SIGNING_SECRET. Throws an Error naming the file
 * when a key file cannot be read or holds no Ed25519 private key (never its content).
 */
/** How webhooks are signed (part of PushSettings). */
export interface PushSigningSettings {
  readonly signing: "ed25519" | "hmac" | "off";
  /** HMAC root secret bytes (per-tenant secrets are derived from it); null = none. */
  readonly signingKey: Buffer | null;
  /** PEM file of the Ed25519 key; null = the key the server keeps in its data directory. */
  readonly signingKeyFile: string | null;
}

export function createWebhookSigner(settings: PushSigningSettings, source: SignerSource): WebhookSigner | undefined {
  if (settings.signing === "off") return undefined;
  if (settings.signing === "hmac") {
    if (settings.signingKey === null) throw new Error("push signing hmac needs A2A_PUSH_SIGNING_SECRET");
    return new TenantHmacSigner(settings.signingKey);
  }
  if (settings.signingKeyFile !== null) return new Ed25519Signer(readKeyFile(settings.signingKeyFile));
  if (!source.durable) return new Ed25519Signer(generateKeyPairSync("ed25519").privateKey);
  return new Ed25519Signer(loadOrCreateKeyFile(join(source.dataDir, SIGNING_KEY_FILE_NAME)));
}

/** The key kept in `file`, or a new one written there (0600, never overwriting one written meanwhile). */
export function loadOrCreateKeyFile(file: string): KeyObject {
  if (existsSync(file)) return readKeyFile(file);
  const { privateKey } = generateKeyPairSync("ed25519");
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600, flag: "wx" });
    return privateKey;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readKeyFile(file);
  }
}

/** An Ed25519 private key from a PEM (PKCS#8) file. */
export function readKeyFile(file: string): KeyObject {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`cannot read the push signing key file ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch {
    throw new Error(`the push signing key file ${file} holds no PEM private key (expected an Ed25519 key in PKCS#8 PEM)`);
  }
  if (key.asymmetricKeyType !== "ed25519") {
    throw new Error(`the push signing key file ${file} holds a ${key.asymmetricKeyType ?? "non-asymmetric"} key; expected Ed25519`);
  }
  return key;
}
