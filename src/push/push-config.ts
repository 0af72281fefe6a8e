import { resolve } from "node:path";
import { ConfigError } from "../settings/config-error.js";
import { parseBoolean, parseChoice, parseDurationOrOff, parseInteger } from "../settings/parse-values.js";
import { settingName, type SettingGetter } from "../settings/setting.js";
import { parseNetwork } from "./destination-guard.js";
import { PUSH_SETTINGS } from "./push-settings.js";
import { parseSigningSecret } from "./signature.js";
import { readKeyFile, type PushSigningSettings } from "./signing-key.js";

type PushSettingKey = keyof typeof PUSH_SETTINGS;

/** Push notification delivery (this folder), parsed. */
export interface PushSettings extends PushSigningSettings {
  /** Host names, IPs and CIDRs let through the destination guard. */
  readonly allowHosts: readonly string[];
  readonly allowHttp: boolean;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxAgeMs: number;
  readonly concurrency: number;
  /** Requests in flight to one destination host at most. */
  readonly concurrencyPerHost: number;
  readonly maxConfigsPerTask: number;
}

/** Reads the push settings; `get` names the setting when a value does not parse. */
export function loadPushSettings(get: SettingGetter<PushSettingKey>, cwd: string): PushSettings {
  const ms =
    (min: number, max = 2 ** 31 - 1) =>
    (v: string) =>
      parseInteger(v, { min, max });
  const backoffMs = get("pushBackoffMs", ms(1), "1000");
  const maxBackoffMs = get("pushMaxBackoffMs", ms(1), "300000");
  if (maxBackoffMs < backoffMs) {
    throw new ConfigError(
      `invalid configuration: ${settingName(PUSH_SETTINGS.pushMaxBackoffMs)} (${maxBackoffMs}) is below ${settingName(PUSH_SETTINGS.pushBackoffMs)} (${backoffMs})`,
    );
  }
  return {
    allowHosts: get("pushAllowHosts", parseHostList, " "),
    allowHttp: get("pushAllowHttp", parseBoolean, "false"),
    timeoutMs: get("pushTimeoutMs", ms(100, 600_000), "10000"),
    maxAttempts: get("pushMaxAttempts", ms(1, 1000), "10"),
    backoffMs,
    maxBackoffMs,
    maxAgeMs: get(
      "pushMaxAge",
      (v) => {
        const d = parseDurationOrOff(v);
        if (d === null) throw new Error("expected a duration like 24h or 30m");
        return d;
      },
      "24h",
    ),
    concurrency: get("pushConcurrency", ms(1, 10_000), "32"),
    concurrencyPerHost: get("pushConcurrencyPerHost", ms(1, 10_000), "4"),
    maxConfigsPerTask: get("pushMaxConfigsPerTask", ms(1, 1000), "10"),
    ...loadPushSigning(get, cwd),
  };
}

/** Ed25519 by default; HMAC (per tenant) when asked, or when only the HMAC root secret is given. */
function loadPushSigning(get: SettingGetter<PushSettingKey>, cwd: string): Pick<PushSettings, "signingKey" | "signing" | "signingKeyFile"> {
  const signingKey = get("pushSigningSecret", (v) => (v.trim() === "" ? null : parseSigningSecret(v)), " ");
  const signing = get("pushSigning", (v) => parseChoice(v, ["ed25519", "hmac", "off"] as const), signingKey === null ? "ed25519" : "hmac");
  if (signing === "hmac" && signingKey === null) {
    throw new ConfigError(`invalid configuration: ${settingName(PUSH_SETTINGS.pushSigning)} = "hmac" needs ${settingName(PUSH_SETTINGS.pushSigningSecret)}`);
  }
  const signingKeyFile = get("pushSigningKeyFile", (v) => (v.trim() === "" ? null : (readKeyFile(resolve(cwd, v)), resolve(cwd, v))), " ");
  return { signingKey, signing, signingKeyFile };
}

/** `a.example, 127.0.0.1, 10.0.0.0/8`: host names, IPs and CIDRs. */
function parseHostList(value: string): string[] {
  const entries = value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  for (const entry of entries) {
    if (entry.includes("/") && parseNetwork(entry) === undefined)
      throw new Error(`${JSON.stringify(entry)} is not a CIDR range such as 10.0.0.0/8 or fd00::/8`);
    if (!entry.includes("/") && parseNetwork(entry) === undefined && !/^[a-z0-9.-]+$/i.test(entry)) {
      throw new Error(`${JSON.stringify(entry)} is neither a host name, an IP address nor a CIDR range`);
    }
  }
  return entries;
}
