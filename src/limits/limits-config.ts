import { ConfigError } from "../config/config-error.js";
import { parseInteger } from "../config/parse-values.js";
import { SETTINGS, settingName, type SettingKey } from "../config/settings.js";

/** Per-principal and global limits; 0 = no limit. */
export interface LimitsConfig {
  /** Requests per second per principal (token bucket refill). */
  readonly ratePerSecond: number;
  /** Bucket size: requests a principal may make at once. */
  readonly burst: number;
  readonly runsPerPrincipal: number;
  readonly runsTotal: number;
  readonly streamsPerPrincipal: number;
}

export const DEFAULT_LIMITS: LimitsConfig = Object.freeze({
  ratePerSecond: 50_000,
  burst: 100_000,
  runsPerPrincipal: 10_000,
  runsTotal: 50_000,
  streamsPerPrincipal: 10_000,
});

export function loadLimitsConfig(raw: (key: SettingKey) => string | undefined): LimitsConfig {
  const int = (key: SettingKey, fallback: number): number => {
    const v = raw(key);
    if (v === undefined) return fallback;
    try {
      return parseInteger(v, { max: 1_000_000_000 });
    } catch (e) {
      throw new ConfigError(`invalid configuration: ${settingName(SETTINGS[key])} = ${JSON.stringify(v)}: ${(e as Error).message}`);
    }
  };
  const ratePerSecond = int("limitRate", DEFAULT_LIMITS.ratePerSecond);
  return {
    ratePerSecond,
    burst: int("limitBurst", Math.max(1, ratePerSecond * 2)),
    runsPerPrincipal: int("limitRunsPerPrincipal", DEFAULT_LIMITS.runsPerPrincipal),
    runsTotal: int("limitRuns", DEFAULT_LIMITS.runsTotal),
    streamsPerPrincipal: int("limitStreamsPerPrincipal", DEFAULT_LIMITS.streamsPerPrincipal),
  };
}
