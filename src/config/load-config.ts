import { X509Certificate, createPrivateKey } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Config, TlsConfig } from "./config.js";
import { isLoopbackOnly, loadAuthConfig } from "../auth/auth-config.js";
import { loadLimitsConfig } from "../limits/limits-config.js";
import { ConfigError } from "../settings/config-error.js";
import { formatHostPort, parseBoolean, parseBytes, parseChoice, parseDurationOrOff, parseHostPort, parseInteger } from "../settings/parse-values.js";
import { SETTINGS, settingName, type Setting, type SettingKey } from "./settings.js";
import { invalidSetting, shownValue } from "../settings/setting.js";
import { loadPushSettings } from "../push/push-config.js";

export interface ConfigSources {
  /** Command-line arguments after the script name. */
  readonly argv?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal (picks the default log format). */
  readonly stdoutIsTTY?: boolean;
  /** Base for relative paths. */
  readonly cwd?: string;
  /**
   * Read for a probe of a server that is already running (the container health check): the
   * secure-default refusal is the server's to make, not the probe's.
   */
  readonly probe?: boolean;
}

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** True when the command line asks for the settings table instead of a run. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/**
 * Reads the configuration from flags and environment variables (flags win) and
 * validates all of it, TLS files included. Throws one ConfigError naming the setting.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const cwd = sources.cwd ?? process.cwd();
  const flags = parseFlags(sources.argv ?? []);

  /** The raw text of a setting, or undefined when unset (empty counts as unset). */
  const raw = (key: SettingKey): string | undefined => {
    const s = SETTINGS[key];
    const v = flags[s.flag] ?? env[s.env];
    return v === undefined || v === "" ? undefined : v;
  };
  /** Parses a setting with `parse`, naming the setting when it fails. */
  function get<T>(key: SettingKey, parse: (v: string) => T): T | undefined;
  function get<T>(key: SettingKey, parse: (v: string) => T, fallback: string): T;
  function get<T>(key: SettingKey, parse: (v: string) => T, fallback?: string): T | undefined {
    const v = raw(key) ?? fallback;
    if (v === undefined) return undefined;
    try {
      return parse(v);
    } catch (e) {
      throw invalid(SETTINGS[key], v, (e as Error).message);
    }
  }
  const hostPort = (v: string) => formatHostPort(parseHostPort(v));

  const listen = get("listen", hostPort, "127.0.0.1:50051");
  const listenOrOff = (v: string) => (v.toLowerCase() === "off" ? null : hostPort(v));
  // A2A_HTTP_LISTEN, or its older name A2A_CARD_LISTEN.
  const cardListen = raw("httpListen") !== undefined ? get("httpListen", listenOrOff)! : get("cardListen", listenOrOff, "127.0.0.1:8080");
  const agentModule = get("agentModule", (v) => readablePath(resolve(cwd, v)));
  const tls = loadTls(raw, cwd);
  const store = get("store", (v) => parseChoice(v, ["sqlite", "memory", "postgres"] as const), "sqlite");
  if (store === "postgres" && raw("databaseUrl") === undefined) {
    throw new ConfigError(
      `invalid configuration: ${settingName(SETTINGS.store)} = "postgres" needs ${settingName(SETTINGS.databaseUrl)} (postgres://user:password@host:5432/database)`,
    );
  }

  return {
    listen,
    tls,
    maxMessageBytes: get("maxMessageBytes", parseBytes, "4194304"),
    keepaliveTimeMs: get("keepaliveTimeMs", (v) => parseInteger(v, { min: 1000, max: 2 ** 31 - 1 }), "60000"),
    keepaliveTimeoutMs: get("keepaliveTimeoutMs", (v) => parseInteger(v, { min: 1, max: 2 ** 31 - 1 }), "20000"),
    logLevel: get("logLevel", (v) => parseChoice(v, LOG_LEVELS), "info"),
    logFormat: get("logFormat", (v) => parseChoice(v, ["json", "pretty"] as const), sources.stdoutIsTTY ? "pretty" : "json"),
    shutdownGraceMs: get("shutdownGraceMs", (v) => parseInteger(v, { max: 2 ** 31 - 1 }), String(DEFAULT_SHUTDOWN_GRACE_MS)),
    agentModule: agentModule ?? null,
    cardListen,
    jsonRpcPath: get("jsonRpcPath", httpPathOrOff, "/a2a/jsonrpc"),
    publicHttpUrl: get("publicHttpUrl", httpBaseUrl) ?? null,
    restPath: get("restPath", httpPathOrOff, "/a2a/rest"),
    preferredBinding: get("preferredBinding", (v) => parseChoice(v.toLowerCase(), ["grpc", "jsonrpc", "rest"] as const), "grpc"),
    sseKeepAliveMs: get("sseKeepAliveMs", parseDurationOrOff, "15s"),
    v03: get("v03", parseBoolean, "true")
      ? { jsonRpcPath: get("v03JsonRpcPath", httpPathOrOff, "/a2a/v0.3/jsonrpc"), restPath: get("v03RestPath", httpPathOrOff, "/a2a/v0.3/rest") }
      : null,
    corsOrigins:
      get(
        "corsOrigins",
        (v) =>
          v
            .split(",")
            .map((o) => o.trim())
            .filter((o) => o !== ""),
        "",
      ) ?? [],
    metricsListen: get("metricsListen", (v) => (v === "card" ? v : v.toLowerCase() === "off" ? null : hostPort(v)), defaultMetricsListen(listen, cardListen)),
    publicGrpcAddress: get("publicGrpcAddress", hostPort) ?? listen,
    store,
    databaseUrl: get("databaseUrl", parseDatabaseUrl) ?? null,
    databasePoolSize: get("databasePoolSize", (v) => parseInteger(v, { min: 1, max: 1000 }), "10"),
    leaseMs: get("leaseMs", (v) => parseInteger(v, { min: 300, max: 3_600_000 }), "10000"),
    dataDir: resolve(cwd, raw("dataDir") ?? "./data"),
    retentionMs: get("retention", parseDurationOrOff, "off"),
    allowMissingVersion: get("allowMissingVersion", parseBoolean, "false"),
    streaming: get("streaming", parseBoolean, "true"),
    storeDurability: get("storeDurability", (v) => parseChoice(v, ["process", "power"] as const), "process"),
    storeCommitWindowMs: get("storeCommitWindow", parseCommitWindow, "1ms"),
    streamBufferEvents: get("streamBufferEvents", (v) => parseInteger(v, { min: 1, max: 1_000_000 }), "1024"),
    streamBacklogBytes: get("streamBacklogBytes", parseBytes, "4MiB"),
    streamsBacklogBytes: get("streamsBacklogBytes", parseBytes, "256MiB"),
    pushNotifications: get("pushNotifications", parseBoolean, "true"),
    push: loadPushSettings(get, cwd),
    streamResumeRetentionMs: get("streamResumeRetention", parseDurationOrOff, "10m"),
    streamResumeEvents: get("streamResumeEvents", (v) => parseInteger(v, { min: 1, max: 100_000_000 }), "100000"),
    streamResumeBytes: get("streamResumeBytes", parseBytes, "64MiB"),
    streamHeartbeatMs: get("streamHeartbeat", parseDurationOrOff, "15s"),
    agentName: raw("agentName") ?? null,
    agentDescription: raw("agentDescription") ?? null,
    auth: loadAuthConfig(raw, cwd, {
      listen: sources.probe ? "127.0.0.1:0" : listen,
      listenSetting: SETTINGS.listen,
      mtlsReady: tls?.clientCa != null,
      clientCaSetting: SETTINGS.tlsClientCa,
    }),
    limits: loadLimitsConfig(raw, isAuthenticated(raw("auth"))),
  };
}

/**
 * 7 s, not 10: the agents' grace, then up to 1 s of last replies and the shutdown hooks (push,
 * store) must end within the 10 s docker and podman wait after SIGTERM before they SIGKILL
 * (exit 137). Deployment files give more room (stop_grace_period, terminationGracePeriodSeconds).
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = 7000;

/** Where metrics go unless A2A_METRICS_LISTEN says: beside the card while everything is loopback, else on their own loopback listener. */
export const PRIVATE_METRICS_LISTEN = "127.0.0.1:9464";

/**
 * Issue 33 finding 13: the card is public by design, metrics are not. A card listener beside a
 * server reachable beyond loopback (its gRPC or its card listener) does not serve them: they get a
 * listener of their own, on loopback; an operator opens them up on purpose (A2A_METRICS_LISTEN).
 * With the card listener off they stay off, as before: no port is bound that nobody asked for.
 */
function defaultMetricsListen(listen: string, cardListen: string | null): string {
  if (cardListen === null || (isLoopbackOnly(listen) && isLoopbackOnly(cardListen))) return "card";
  return PRIVATE_METRICS_LISTEN;
}

/** A2A_AUTH names a scheme (not unset, empty or none): the limits take their public defaults. */
function isAuthenticated(authText: string | undefined): boolean {
  const text = authText?.trim().toLowerCase();
  return text !== undefined && text !== "" && text !== "none";
}

/** `0` or a duration up to a second: `1ms`, `5ms`. */
function parseCommitWindow(value: string): number {
  if (value === "0") return 0;
  const ms = /^\d/.test(value) ? parseDurationOrOff(value) : null; // "off" is not a window: 0 is
  if (ms === null || ms > 1000) throw new Error("expected 0 or a duration up to 1s, e.g. 1ms");
  return ms;
}

/** Settings whose value is a secret or may hold one (a password in a database URL): an error never repeats them, not even in part. */
const SECRET_SETTINGS: ReadonlySet<Setting> = new Set<Setting>([SETTINGS.databaseUrl, SETTINGS.pushSigningSecret]);
function invalid(s: Setting, value: string, why: string): ConfigError {
  return invalidSetting(s, value, why, SECRET_SETTINGS.has(s));
}

/** Flags by long name. Boolean flags may stand alone (`--allow-missing-version`). */
function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  const booleans = new Set(
    Object.values(SETTINGS)
      .filter((s) => "boolean" in s)
      .map((s) => `--${s.flag}`),
  );
  const args = argv.map((a) => (booleans.has(a) ? `${a}=true` : a));
  const options = Object.fromEntries(Object.values(SETTINGS).map((s) => [s.flag, { type: "string" as const }]));
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (e) {
    const err = e as Error & { code?: string };
    const arg = /'([^']+)'/.exec(err.message)?.[1] ?? "";
    switch (err.code) {
      case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
        throw new ConfigError(`invalid configuration: unknown flag ${arg} (run with --help for the list)`);
      case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
        throw new ConfigError(`invalid configuration: unexpected argument ${shownValue(arg)} (flags look like --listen=127.0.0.1:50051)`);
      case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
        throw new ConfigError(`invalid configuration: flag ${arg.split(" ")[0]} needs a value`);
      default:
        throw new ConfigError(`invalid configuration: ${err.message}`);
    }
  }
}

/** A postgres:// URL; the error never repeats it (it may hold a password). */
function parseDatabaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error("not a URL (expected postgres://user:password@host:5432/database)");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw new Error(`expected a postgres:// URL, not ${url.protocol}//`);
  if (url.hostname === "") throw new Error("the URL names no host");
  return value;
}

function readablePath(path: string): string {
  try {
    accessSync(path, constants.R_OK);
  } catch (e) {
    throw new Error(`cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!statSync(path).isFile()) throw new Error(`${path} is not a file`);
  return path;
}

function readFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** Reads and checks the TLS files: both halves present, parseable PEM, key matching the certificate. */
function loadTls(raw: (key: SettingKey) => string | undefined, cwd: string): TlsConfig | null {
  const certPath = raw("tlsCert");
  const keyPath = raw("tlsKey");
  const caPath = raw("tlsClientCa");
  const name = (k: SettingKey) => settingName(SETTINGS[k]);
  if (!certPath && !keyPath) {
    if (caPath) throw new ConfigError(`invalid configuration: ${name("tlsClientCa")} is set but TLS is off: set ${name("tlsCert")} and ${name("tlsKey")} too`);
    return null;
  }
  if (!certPath) throw new ConfigError(`invalid configuration: ${name("tlsKey")} is set but ${name("tlsCert")} is not: TLS needs both`);
  if (!keyPath) throw new ConfigError(`invalid configuration: ${name("tlsCert")} is set but ${name("tlsKey")} is not: TLS needs both`);

  const load = <T>(key: SettingKey, path: string, check: (pem: Buffer) => T): [Buffer, T] => {
    const file = resolve(cwd, path);
    try {
      const pem = readFile(file);
      return [pem, check(pem)];
    } catch (e) {
      throw invalid(SETTINGS[key], path, (e as Error).message);
    }
  };
  const [cert, x509] = load("tlsCert", certPath, (pem) => {
    try {
      return new X509Certificate(pem);
    } catch {
      throw new Error("not a PEM certificate");
    }
  });
  const [key, privateKey] = load("tlsKey", keyPath, (pem) => {
    try {
      return createPrivateKey(pem);
    } catch {
      throw new Error("not an unencrypted PEM private key");
    }
  });
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(`invalid configuration: ${name("tlsKey")} does not belong to the certificate in ${name("tlsCert")}`);
  }
  const [clientCa] = caPath
    ? load("tlsClientCa", caPath, (pem) => {
        try {
          return new X509Certificate(pem);
        } catch {
          throw new Error("not a PEM CA certificate");
        }
      })
    : [null];
  return {
    certFile: resolve(cwd, certPath),
    keyFile: resolve(cwd, keyPath),
    cert,
    key,
    clientCaFile: caPath ? resolve(cwd, caPath) : null,
    clientCa,
  };
}

/** A path on the HTTP listener ("/a2a/jsonrpc"), or null for "off". */
function httpPathOrOff(v: string): string | null {
  if (v.toLowerCase() === "off") return null;
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(v) || v.length > 256) throw new Error("expected a path starting with / (or off)");
  return v;
}

/** An absolute http(s) URL without a trailing slash. */
function httpBaseUrl(v: string): string {
  const url = new URL(v);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("expected an http:// or https:// URL");
  return v.replace(/\/+$/, "");
}
