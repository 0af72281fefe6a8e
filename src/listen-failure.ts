/**
 * A listener that could not bind, said the way an operator acts on it: one line naming the
 * setting and the address (`A2A_LISTEN 127.0.0.1:50051 is in use`), instead of a library's
 * message and a stack trace.
 */
import type { Setting } from "./config/settings.js";

/** A listener the process binds: the setting that asked for it and its address as configured. */
export interface Listener {
  readonly setting: Setting;
  readonly address: string;
}

const REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: "is in use",
  EACCES: "may not be bound by this user (permission denied; ports below 1024 need privileges)",
  EADDRNOTAVAIL: "is not an address of this machine",
};

/**
 * The one line for a bind error, or undefined when the error is not one of those.
 * Node's message carries the address (`listen EADDRINUSE: address already in use 127.0.0.1:8080`);
 * grpc-js wraps it in its own; either way it tells which of `listeners` failed.
 */
export function describeListenFailure(error: unknown, listeners: readonly Listener[]): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const code = errorCode(error, message);
  if (code === undefined || listeners.length === 0) return undefined;
  const failed = listenerAt(listeners, addressIn(message, code)) ?? listeners[0]!;
  return `${failed.setting.env} ${failed.address} ${REASONS[code]}`;
}

function errorCode(error: unknown, message: string): string | undefined {
  const own = (error as { code?: unknown } | null)?.code;
  if (typeof own === "string" && own in REASONS) return own;
  return Object.keys(REASONS).find((code) => new RegExp(`\\b${code}\\b`).test(message));
}

/** The `host:port` that follows the code in the message (IPv6 hosts come without brackets). */
function addressIn(message: string, code: string): { host: string; port: string } | undefined {
  const match = new RegExp(`${code}[^\\]\\n]*?\\s(\\S+):(\\d+)\\b`).exec(message);
  return match === null ? undefined : { host: match[1]!, port: match[2]! };
}

function listenerAt(listeners: readonly Listener[], at: { host: string; port: string } | undefined): Listener | undefined {
  if (at === undefined) return undefined;
  const split = (address: string) => {
    const colon = address.lastIndexOf(":");
    return { host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port: address.slice(colon + 1) };
  };
  const samePort = listeners.filter((l) => split(l.address).port === at.port);
  return samePort.find((l) => split(l.address).host === at.host) ?? samePort[0];
}

/**
 * Two listeners given one host:port (port 0 aside) would collide with each other, and the bind
 * error would blame whichever came second as if something else held the port: say so first.
 */
export function describeSharedAddress(listeners: readonly Listener[]): string | undefined {
  for (const [index, later] of listeners.entries()) {
    if (later.address.endsWith(":0")) continue;
    const earlier = listeners.slice(0, index).find((l) => l.address === later.address);
    if (earlier !== undefined) return `${later.setting.env} ${later.address} is also ${earlier.setting.env}; give each listener its own port`;
  }
  return undefined;
}
