/**
 * Parsers for the value kinds settings use. Each returns the parsed value or throws a
 * plain Error that says what was expected; the loader adds which setting it was.
 */

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** `host:port`, `[v6]:port`. Port 0 is allowed (the OS picks one). */
export function parseHostPort(value: string): HostPort {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]/]+)):(\d{1,5})$/.exec(value);
  if (!m) throw new Error("expected host:port, e.g. 127.0.0.1:50051 or [::1]:50051");
  const port = Number(m[3]);
  if (port > 65535) throw new Error("port must be 0..65535");
  return { host: m[1] ?? m[2]!, port };
}

export function formatHostPort({ host, port }: HostPort): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A non-negative integer, at most `max`. */
export function parseInteger(value: string, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
  if (!/^\d+$/.test(value)) throw new Error("expected a whole number");
  const n = Number(value);
  if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}`);
  return n;
}

const BYTE_UNITS: Record<string, number> = { "": 1, b: 1, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/** Bytes: `4194304`, `512KiB`, `4MiB`. grpc-js keeps sizes in a 32-bit int. */
export function parseBytes(value: string): number {
  const m = /^(\d+)\s*([a-zA-Z]*)$/.exec(value);
  const unit = m ? BYTE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new Error("expected a size in bytes, e.g. 4194304 or 4MiB");
  const n = Number(m[1]) * unit;
  if (n < 1 || n > 2 ** 31 - 1) throw new Error("expected a size from 1 byte to 2 GiB - 1");
  return n;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `7d`, `12h`, `1h30m`, `90s`; `off` = null. */
export function parseDurationOrOff(value: string): number | null {
  if (value.toLowerCase() === "off") return null;
  if (!/^(\d+(ms|s|m|h|d))+$/.test(value)) throw new Error("expected a duration like 7d, 12h, 1h30m, 90s, or off");
  let total = 0;
  for (const [, n, unit] of value.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * DURATION_UNITS[unit!]!;
  if (total <= 0) throw new Error("expected a duration above zero, or off");
  return total;
}

/** true/false, 1/0, yes/no, on/off. */
export function parseBoolean(value: string): boolean {
  const v = value.toLowerCase();
  if (["true", "1", "yes", "on"].includes(v)) return true;
  if (["false", "0", "no", "off"].includes(v)) return false;
  throw new Error("expected true or false");
}

/** One of the listed words. */
export function parseChoice<T extends string>(value: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === value.toLowerCase());
  if (found === undefined) throw new Error(`expected one of: ${choices.join(", ")}`);
  return found;
}
