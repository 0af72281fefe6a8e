import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ConfigError } from "../settings/config-error.js";
import { parseChoice, parseDurationOrOff, parseHostPort, parseInteger } from "../settings/parse-values.js";
import { invalidSetting, settingName, type Setting } from "../settings/setting.js";
import { AUTH_SETTINGS } from "./auth-settings.js";
import type { AuthScheme } from "./identity.js";
import { ALLOWED_JWT_ALGORITHMS, DEFAULT_JWT_ALGORITHMS, DEFAULT_MAX_TOKEN_LIFETIME_MS, type JwtSettings } from "./jwt-authenticator.js";
import type { MtlsPrincipalSource } from "./mtls-authenticator.js";
import { RpcScopes } from "./rpc-scopes.js";

/** Authentication as configured: what the server enforces and what its card declares. */
export interface AuthConfig {
  /** Schemes tried in order; empty = every caller is anonymous. */
  readonly schemes: readonly AuthScheme[];
  /** Why callers may be anonymous: "none" (A2A_AUTH=none) or "loopback" (A2A_AUTH unset, loopback only). */
  readonly anonymous: "none" | "loopback" | undefined;
  readonly jwt: JwtSettings | undefined;
  readonly apiKeysFile: string | undefined;
  readonly mtlsPrincipal: MtlsPrincipalSource;
  readonly rpcScopes: RpcScopes;
  /**
   * The services beside A2A that need a credential too (A2A_AUTH_OPEN_SERVICES names the open
   * ones); always empty when callers are anonymous.
   */
  readonly guardedServices: readonly GuardedService[];
}

/** A gRPC service beside A2A that may be made to need a credential (A2A_AUTH_OPEN_SERVICES). */
export type GuardedService = "health" | "reflection";

/** The gRPC services beside A2A whose calls may be made to need a credential. */
export const GUARDABLE_SERVICES: readonly GuardedService[] = ["health", "reflection"];

const SCHEMES: readonly AuthScheme[] = ["jwt", "api-key", "mtls"];
/** What the scope table (A2A_AUTH_SCOPES) may name: the A2A RPCs, and health and reflection as wholes. */
const RPC_NAMES = [...A2AService.methods.map((m) => m.name), ...GUARDABLE_SERVICES];

export type AuthSettingKey = keyof typeof AUTH_SETTINGS;

/** What the server's own settings tell authentication: where it listens, and whether mTLS is possible. */
export interface ServerFacts {
  /** The gRPC listen address (host:port). */
  readonly listen: string;
  readonly listenSetting: Setting;
  /** A2A_TLS_CLIENT_CA is set: clients can present certificates. */
  readonly mtlsReady: boolean;
  readonly clientCaSetting: Setting;
}

/**
 * Reads the authentication settings. `listen` and `mtlsReady` (A2A_TLS_CLIENT_CA is set) are
 * checked against them: with no A2A_AUTH the server may only listen on loopback.
 */
export function loadAuthConfig(raw: (key: AuthSettingKey) => string | undefined, cwd: string, server: ServerFacts): AuthConfig {
  const { listen, mtlsReady } = server;
  const name = (key: AuthSettingKey) => settingName(AUTH_SETTINGS[key]);
  // A JWKS URL may carry a password (user:pass@host): it is never repeated.
  const invalid = (key: AuthSettingKey, why: string) => invalidSetting(AUTH_SETTINGS[key], raw(key) ?? "", why, key === "jwtJwksUrl");
  const authText = raw("auth");
  const rpcScopes = parseOr("authScopes", (v) => RpcScopes.parse(v, RPC_NAMES), RpcScopes.NONE);
  const mtlsPrincipal = parseOr("mtlsPrincipal", (v) => parseChoice(v, ["subject", "san"] as const), "subject" as const);
  const openServices = parseOr("authOpenServices", parseOpenServices, GUARDABLE_SERVICES);

  function parseOr<T>(key: AuthSettingKey, parse: (v: string) => T, fallback: T): T {
    const v = raw(key);
    if (v === undefined) return fallback;
    try {
      return parse(v);
    } catch (e) {
      throw invalid(key, (e as Error).message);
    }
  }

  if (authText === undefined || authText.trim().toLowerCase() === "none") {
    const anonymous = authText === undefined ? "loopback" : "none";
    if (anonymous === "loopback" && !isLoopbackOnly(listen)) {
      throw new ConfigError(
        `refusing to start: ${settingName(server.listenSetting)} = ${listen} is reachable beyond loopback and no authentication is configured; set ${name("auth")} to jwt, api-key or mtls (see README "Authentication"), or A2A_AUTH=none to allow anonymous callers`,
      );
    }
    return { schemes: [], anonymous, jwt: undefined, apiKeysFile: undefined, mtlsPrincipal, rpcScopes, guardedServices: [] };
  }
  const schemes: AuthScheme[] = [];
  for (const word of authText.split(",").map((w) => w.trim().toLowerCase())) {
    if (!(SCHEMES as readonly string[]).includes(word)) throw invalid("auth", `expected none, or one or more of ${SCHEMES.join(", ")} separated by commas`);
    if (schemes.includes(word as AuthScheme)) throw invalid("auth", `${word} is listed twice`);
    schemes.push(word as AuthScheme);
  }
  if (schemes.includes("mtls") && !mtlsReady) {
    throw new ConfigError(
      `invalid configuration: ${name("auth")} includes mtls but ${settingName(server.clientCaSetting)} is not set: client certificates need TLS with a client CA`,
    );
  }
  const apiKeysFile = raw("apiKeysFile");
  if (schemes.includes("api-key") && apiKeysFile === undefined)
    throw new ConfigError(`invalid configuration: ${name("auth")} includes api-key but ${name("apiKeysFile")} is not set`);
  return {
    schemes,
    anonymous: undefined,
    jwt: schemes.includes("jwt") ? loadJwt() : undefined,
    apiKeysFile: schemes.includes("api-key") && apiKeysFile !== undefined ? resolve(cwd, apiKeysFile) : undefined,
    mtlsPrincipal,
    rpcScopes,
    guardedServices: GUARDABLE_SERVICES.filter((service) => !openServices.includes(service)),
  };

  function loadJwt(): JwtSettings {
    const keyFile = raw("jwtPublicKeyFile");
    const jwks = raw("jwtJwksUrl");
    if ((keyFile === undefined) === (jwks === undefined)) {
      throw new ConfigError(`invalid configuration: ${name("auth")} includes jwt: set exactly one of ${name("jwtPublicKeyFile")} and ${name("jwtJwksUrl")}`);
    }
    const issuer = raw("jwtIssuer");
    const audience = raw("jwtAudience");
    if (issuer === undefined || audience === undefined) {
      throw new ConfigError(
        `invalid configuration: ${name("auth")} includes jwt: set ${name("jwtIssuer")} and ${name("jwtAudience")} (tokens are checked against both)`,
      );
    }
    const algorithms = parseOr(
      "jwtAlgorithms",
      (v) => {
        const list = v
          .split(",")
          .map((a) => a.trim())
          .filter((a) => a !== "");
        const bad = list.find((a) => !ALLOWED_JWT_ALGORITHMS.includes(a));
        if (bad !== undefined) throw new Error(`${bad} is not allowed; choose from ${ALLOWED_JWT_ALGORITHMS.join(", ")} (none and HMAC are never accepted)`);
        if (list.length === 0) throw new Error("list at least one algorithm");
        return list;
      },
      [...DEFAULT_JWT_ALGORITHMS],
    );
    let publicKeyPem: Buffer | undefined;
    if (keyFile !== undefined) {
      const path = resolve(cwd, keyFile);
      try {
        publicKeyPem = readFileSync(path);
      } catch (e) {
        throw invalid("jwtPublicKeyFile", `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
      }
      if (/PRIVATE KEY/.test(publicKeyPem.toString("latin1")))
        throw invalid("jwtPublicKeyFile", "the file holds a private key; give the public key or certificate only");
      if (!/-----BEGIN (PUBLIC KEY|CERTIFICATE|RSA PUBLIC KEY)-----/.test(publicKeyPem.toString("latin1")))
        throw invalid("jwtPublicKeyFile", "not a PEM public key or certificate");
    }
    const jwksUrl = jwks === undefined ? undefined : parseOr("jwtJwksUrl", parseJwksUrl, undefined);
    return {
      publicKeyPem,
      jwksUrl,
      issuer,
      audience,
      algorithms,
      clockSkewSeconds: parseOr("jwtClockSkewS", (v) => parseInteger(v, { max: 600 }), 30),
      scopesClaim: raw("jwtScopesClaim") ?? "scope",
      tenantsClaim: raw("jwtTenantsClaim"),
      jwksTimeoutMs: parseOr("jwtJwksTimeoutMs", (v) => parseInteger(v, { min: 100, max: 60_000 }), 5000),
      maxTokenLifetimeMs: parseOr("jwtMaxTokenLifetime", parseLifetime, DEFAULT_MAX_TOKEN_LIFETIME_MS),
      publicKeyFile: keyFile === undefined ? undefined : resolve(cwd, keyFile),
    };
  }
}

/** A2A_JWT_MAX_TOKEN_LIFETIME: a duration from a minute to a year (never off: an unbounded exp is the flaw it closes). */
function parseLifetime(value: string): number {
  const ms = value.toLowerCase() === "off" ? null : parseDurationOrOff(value);
  if (ms === null || ms < 60_000 || ms > 366 * 86_400_000) throw new Error("expected a duration from 1m to 366d, like 24h or 90m");
  return ms;
}

/** A2A_AUTH_OPEN_SERVICES: a comma list of health and reflection, or none (or empty). */
function parseOpenServices(value: string): readonly GuardedService[] {
  const words = value
    .split(",")
    .map((w) => w.trim().toLowerCase())
    .filter((w) => w !== "");
  if (words.length === 1 && words[0] === "none") return [];
  for (const word of words) {
    if (!(GUARDABLE_SERVICES as readonly string[]).includes(word)) throw new Error(`expected none, or health, reflection or both separated by a comma`);
  }
  return words as GuardedService[];
}

/** A JWKS URL: https, or http to a loopback host (development, tests). */
function parseJwksUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error("expected an absolute https URL");
  }
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname.replace(/^\[(.*)\]$/, "$1"))) return url;
  throw new Error("expected an https URL (plain http only to a loopback host)");
}

/** True when `listen` (host:port) accepts connections from this machine only. */
export function isLoopbackOnly(listen: string): boolean {
  return isLoopbackHost(parseHostPort(listen).host);
}

function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(h);
  return false;
}
