import { parseInteger } from "../settings/parse-values.js";
import { invalidSetting } from "../settings/setting.js";
import { LIMITS_SETTINGS } from "./limits-settings.js";

type LimitsSettingKey = keyof typeof LIMITS_SETTINGS;

/** Per-principal and global limits; 0 = no limit. */
export interface LimitsConfig {
  /** Requests per second per principal (token bucket refill). */
  readonly ratePerSecond: number;
  /** Bucket size: requests a principal may make at once. */
  readonly burst: number;
  readonly runsPerPrincipal: number;
  readonly runsTotal: number;
  readonly streamsPerPrincipal: number;
  /** Refused credentials per second per client address (token bucket of AUTH_FAILURE_BURST_SECONDS × this); 0 = no limit. */
  readonly authFailuresPerSecond: number;
  /** Tasks one principal may have stored; 0 = no quota. */
  readonly tasksPerPrincipal: number;
  /** Most entries in one Struct or list of a request. */
  readonly structEntries: number;
  /** Deepest nesting of Structs and lists in a request value. */
  readonly structDepth: number;
}

/** Local anonymous use (no A2A_AUTH: loopback only): practically unthrottled, as before issue 33. */
export const DEFAULT_LIMITS: LimitsConfig = Object.freeze({
  ratePerSecond: 50_000,
  burst: 100_000,
  runsPerPrincipal: 10_000,
  runsTotal: 50_000,
  streamsPerPrincipal: 10_000,
  authFailuresPerSecond: 10,
  tasksPerPrincipal: 0,
  structEntries: 10_000,
  structDepth: 32,
});

/**
 * With authentication on (a public service), per-principal limits one server sustains while one
 * principal spends all of them (issue 33, finding 12; README "Limits" says how they were chosen).
 */
export const AUTHENTICATED_DEFAULT_LIMITS: LimitsConfig = Object.freeze({
  ...DEFAULT_LIMITS,
  ratePerSecond: 100,
  burst: 200,
  runsPerPrincipal: 32,
  streamsPerPrincipal: 32,
});

/** A client address may spend this many seconds' worth of refused credentials at once. */
export const AUTH_FAILURE_BURST_SECONDS = 5;

/** Reads the limits settings; `authenticated` (A2A_AUTH names a scheme) picks the public defaults. */
export function loadLimitsConfig(raw: (key: LimitsSettingKey) => string | undefined, authenticated: boolean): LimitsConfig {
  const int = (key: LimitsSettingKey, fallback: number, min = 0): number => {
    const v = raw(key);
    if (v === undefined) return fallback;
    try {
      return parseInteger(v, { min, max: 1_000_000_000 });
    } catch (e) {
      throw invalidSetting(LIMITS_SETTINGS[key], v, (e as Error).message);
    }
  };
  const defaults = authenticated ? AUTHENTICATED_DEFAULT_LIMITS : DEFAULT_LIMITS;
  const ratePerSecond = int("limitRate", defaults.ratePerSecond);
  return {
    ratePerSecond,
    burst: int("limitBurst", raw("limitRate") === undefined ? defaults.burst : Math.max(1, ratePerSecond * 2)),
    runsPerPrincipal: int("limitRunsPerPrincipal", defaults.runsPerPrincipal),
    runsTotal: int("limitRuns", defaults.runsTotal),
    streamsPerPrincipal: int("limitStreamsPerPrincipal", defaults.streamsPerPrincipal),
    authFailuresPerSecond: int("authFailureRate", defaults.authFailuresPerSecond),
    tasksPerPrincipal: int("limitTasksPerPrincipal", defaults.tasksPerPrincipal),
    structEntries: int("maxStructEntries", defaults.structEntries, 1),
    structDepth: int("maxStructDepth", defaults.structDepth, 1),
  };
}
