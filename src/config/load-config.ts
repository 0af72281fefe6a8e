import { X509Certificate, createPrivateKey } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Config, TlsConfig } from "./config.js";
import { ConfigError } from "./config-error.js";
import {
  formatHostPort, parseBoolean, parseBytes, parseChoice, parseDurationOrOff, parseHostPort, parseInteger,
} from "./parse-values.js";
import { SETTINGS, settingName, type Setting, type SettingKey } from "./settings.js";

export interface ConfigSources {
  /** Command-line arguments after the script name. */
  readonly argv?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Whether stdout is a terminal (picks the default log format). */
  readonly stdoutIsTTY?: boolean;
  /** Base for relative paths. */
  readonly cwd?: string;
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
  const cardListen = get("cardListen", (v) => (v.toLowerCase() === "off" ? null : hostPort(v)), "127.0.0.1:8080");
  const agentModule = get("agentModule", (v) => readablePath(resolve(cwd, v)));

  return {
    listen,
    tls: loadTls(raw, cwd),
    maxMessageBytes: get("maxMessageBytes", parseBytes, "4194304"),
    keepaliveTimeMs: get("keepaliveTimeMs", (v) => parseInteger(v, { min: 1000, max: 2 ** 31 - 1 }), "60000"),
    keepaliveTimeoutMs: get("keepaliveTimeoutMs", (v) => parseInteger(v, { min: 1, max: 2 ** 31 - 1 }), "20000"),
    logLevel: get("logLevel", (v) => parseChoice(v, LOG_LEVELS), "info"),
    logFormat: get("logFormat", (v) => parseChoice(v, ["json", "pretty"] as const), sources.stdoutIsTTY ? "pretty" : "json"),
    shutdownGraceMs: get("shutdownGraceMs", (v) => parseInteger(v, { max: 2 ** 31 - 1 }), "10000"),
    agentModule: agentModule ?? null,
    cardListen,
    publicGrpcAddress: get("publicGrpcAddress", hostPort) ?? listen,
    store: get("store", (v) => parseChoice(v, ["sqlite", "memory"] as const), "sqlite"),
    dataDir: resolve(cwd, raw("dataDir") ?? "./data"),
    retentionMs: get("retention", parseDurationOrOff, "off"),
    allowMissingVersion: get("allowMissingVersion", parseBoolean, "false"),
    streaming: get("streaming", parseBoolean, "true"),
    storeDurability: get("storeDurability", (v) => parseChoice(v, ["process", "power"] as const), "process"),
    streamBufferEvents: get("streamBufferEvents", (v) => parseInteger(v, { min: 1, max: 1_000_000 }), "1024"),
    streamBacklogBytes: get("streamBacklogBytes", parseBytes, "4MiB"),
    streamsBacklogBytes: get("streamsBacklogBytes", parseBytes, "256MiB"),
    streamResumeRetentionMs: get("streamResumeRetention", parseDurationOrOff, "10m"),
    streamResumeEvents: get("streamResumeEvents", (v) => parseInteger(v, { min: 1, max: 100_000_000 }), "100000"),
    streamResumeBytes: get("streamResumeBytes", parseBytes, "64MiB"),
    streamHeartbeatMs: get("streamHeartbeat", parseDurationOrOff, "15s"),
    agentName: raw("agentName") ?? null,
    agentDescription: raw("agentDescription") ?? null,
  };
}

function invalid(s: Setting, value: string, why: string): ConfigError {
  return new ConfigError(`invalid configuration: ${settingName(s)} = ${JSON.stringify(value)}: ${why}`);
}

/** Flags by long name. Boolean flags may stand alone (`--allow-missing-version`). */
function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  const booleans = new Set(Object.values(SETTINGS).filter((s) => "boolean" in s).map((s) => `--${s.flag}`));
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
        throw new ConfigError(`invalid configuration: unexpected argument ${JSON.stringify(arg)} (flags look like --listen=127.0.0.1:50051)`);
      case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
        throw new ConfigError(`invalid configuration: flag ${arg.split(" ")[0]} needs a value`);
      default:
        throw new ConfigError(`invalid configuration: ${err.message}`);
    }
  }
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
    try { return new X509Certificate(pem); } catch { throw new Error("not a PEM certificate"); }
  });
  const [key, privateKey] = load("tlsKey", keyPath, (pem) => {
    try { return createPrivateKey(pem); } catch { throw new Error("not an unencrypted PEM private key"); }
  });
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(`invalid configuration: ${name("tlsKey")} does not belong to the certificate in ${name("tlsCert")}`);
  }
  const [clientCa] = caPath
    ? load("tlsClientCa", caPath, (pem) => {
      try { return new X509Certificate(pem); } catch { throw new Error("not a PEM CA certificate"); }
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
