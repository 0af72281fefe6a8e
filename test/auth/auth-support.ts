/**
 * Keys, tokens and key files made in the test (jose generateKeyPair), a JWKS served by a
 * loopback HTTP server, and the metadata that carries each credential.
 */
import * as grpc from "@grpc/grpc-js";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { statusDetails } from "../e2e/e2e-helpers.js";
import { ErrorInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";

export const ISSUER = "https://issuer.test";
export const AUDIENCE = "a2a-test";

export interface TestIssuer {
  readonly dir: string;
  /** The PEM file of the public key (A2A_JWT_PUBLIC_KEY_FILE). */
  readonly publicKeyFile: string;
  readonly publicKeyPem: string;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  /** A signed token: sub, iss, aud, exp in 10 minutes unless `claims` / `options` say otherwise. */
  token(
    claims?: JWTPayload,
    options?: { expiresIn?: string | number; alg?: string; key?: CryptoKey; kid?: string; issuer?: string; audience?: string },
  ): Promise<string>;
  /** The env of a server that accepts this issuer's tokens through its PEM key. */
  env(extra?: Record<string, string>): Record<string, string>;
  remove(): void;
}

export async function makeIssuer(alg = "ES256"): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const dir = mkdtempSync(join(tmpdir(), "a2a-jwt-"));
  const publicKeyPem = await exportSPKI(publicKey);
  const publicKeyFile = join(dir, "issuer.pem");
  writeFileSync(publicKeyFile, publicKeyPem);
  const kid = `k-${Math.random().toString(36).slice(2)}`;
  return {
    dir,
    publicKeyFile,
    publicKeyPem,
    kid,
    privateKey,
    publicKey,
    async token(claims = {}, options = {}) {
      const jwt = new SignJWT({ sub: "alice", ...claims })
        .setProtectedHeader({ alg: options.alg ?? alg, kid: options.kid ?? kid })
        .setIssuedAt()
        .setIssuer(options.issuer ?? ISSUER)
        .setAudience(options.audience ?? AUDIENCE);
      if (options.expiresIn !== undefined) jwt.setExpirationTime(options.expiresIn);
      else jwt.setExpirationTime("10m");
      return jwt.sign(options.key ?? privateKey);
    },
    env(extra = {}) {
      return { A2A_AUTH: "jwt", A2A_JWT_PUBLIC_KEY_FILE: publicKeyFile, A2A_JWT_ISSUER: ISSUER, A2A_JWT_AUDIENCE: AUDIENCE, ...extra };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A JWKS of the given issuers' public keys on http://127.0.0.1:<port>/jwks.json; counts fetches. */
export async function startJwksServer(
  issuers: TestIssuer[],
): Promise<{ url: string; fetches: () => number; setIssuers(next: TestIssuer[]): void; close(): Promise<void> }> {
  let current = issuers;
  let fetches = 0;
  const server: Server = createServer(async (_req, res) => {
    fetches++;
    const keys = await Promise.all(current.map(async (i) => ({ ...(await exportJWK(i.publicKey)), kid: i.kid, use: "sig" })));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    fetches: () => fetches,
    setIssuers: (next) => (current = next),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** a2a-version 1.0 plus the given entries. */
export function withAuth(entries: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  for (const [k, v] of Object.entries(entries)) md.set(k, v);
  return md;
}

export const bearer = (token: string) => withAuth({ authorization: `Bearer ${token}` });

/** The ErrorInfo of an error, from any domain. */
export function errorInfo(error: grpc.ServiceError | undefined): ErrorInfo | undefined {
  const raw = error?.metadata?.get("grpc-status-details-bin")[0];
  if (!(raw instanceof Buffer)) return undefined;
  const any = Status.decode(raw).details.find((d) => d.typeUrl === "type.googleapis.com/google.rpc.ErrorInfo");
  return any ? ErrorInfo.decode(any.value) : undefined;
}

/** Asserts an auth refusal: code, reason, domain, and a message that says what to send. */
export function expectAuthError(error: grpc.ServiceError | undefined, code: grpc.status, reason: string, mentions: RegExp): void {
  expect(error).toBeDefined();
  const info = errorInfo(error);
  expect({ code: error!.code, reason: info?.reason, domain: info?.domain }).toEqual({ code, reason, domain: "auth.a2a-grpc-server" });
  expect(error!.details).toMatch(mentions);
}

export { statusDetails };
