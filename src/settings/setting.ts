import { ConfigError } from "./config-error.js";

/**
 * One setting the service reads: its environment variable, its flag and its documented default.
 * Each capability declares its own settings with `setting(...)`; config/ composes them, and the
 * loader, `--help` and docs/configuration.md all come from those tables, so they cannot drift apart.
 */
export interface Setting {
  readonly env: string;
  /** Long flag without the dashes. */
  readonly flag: string;
  /** How the default reads in docs ("" = unset). */
  readonly defaultText: string;
  readonly description: string;
  /** A flag without a value (`--allow-missing-version`); the env var takes a boolean word. */
  readonly boolean?: true;
}

export function setting(env: string, flag: string, defaultText: string, description: string, boolean?: true): Setting {
  return boolean ? { env, flag, defaultText, description, boolean } : { env, flag, defaultText, description };
}

/** How an error message names a setting: `A2A_LISTEN (--listen)`. */
export function settingName(s: Setting): string {
  return `${s.env} (--${s.flag})`;
}

/** Parses a setting with `parse` (or `fallback` when unset), naming the setting when it fails. */
export type SettingGetter<K extends string> = <T>(key: K, parse: (v: string) => T, fallback: string) => T;

/** Longest value an error repeats: enough to recognise it, never a pasted file. */
const SHOWN_VALUE_CHARS = 120;

/** A value as an error repeats it: quoted and cut short, or not at all when it is (or may hold) a secret. */
export function shownValue(value: string, secret = false): string {
  if (secret) return "(not repeated)";
  return JSON.stringify(value.length > SHOWN_VALUE_CHARS ? `${value.slice(0, SHOWN_VALUE_CHARS)}…` : value);
}

/** One invalid setting, named the way an operator set it, its value shown as shownValue() does. */
export function invalidSetting(setting: Setting, value: string, why: string, secret = false): ConfigError {
  return new ConfigError(`invalid configuration: ${settingName(setting)} = ${shownValue(value, secret)}: ${why}`);
}
