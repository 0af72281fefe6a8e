/**
 * A2A service parameters as they arrive in gRPC metadata (R-VER-1, R-EXT-1). grpc-js lower-cases
 * keys; values may be comma-separated in one entry or repeated as several entries (R-VER-2).
 */
import type { CallMetadata } from "./face.js";
import type { AgentExtension } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ExtensionSupportRequiredError, VersionNotSupportedError } from "../lifecycle/index.js";

export const VERSION_KEY = "a2a-version";
export const EXTENSIONS_KEY = "a2a-extensions";

/** Protocol versions (Major.Minor) this server speaks. */
export const SUPPORTED_VERSIONS: readonly string[] = ["1.0"];

/** What an absent or empty a2a-version means (R-VER-4, A-3). */
const IMPLIED_VERSION = "0.3";

export interface ReadVersionOptions {
  /** Operator option (A-3, off by default): read a missing header as the current version, for hand-driven tools. */
  allowMissing: boolean;
}

const NO_EXTENSIONS: readonly string[] = Object.freeze([]);

/** All entries of a metadata key, split on commas, trimmed, without empty items. */
export function listValues(metadata: CallMetadata, key: string): string[] {
  const items: string[] = [];
  // Plain loops: this runs twice on every call, and the usual entry is one short value.
  for (const value of metadata.get(key)) {
    if (typeof value !== "string") continue;
    for (const part of value.includes(",") ? value.split(",") : [value]) {
      const item = part.trim();
      if (item !== "") items.push(item);
    }
  }
  return items;
}

/**
 * "1.0", "1.0.3" and "01.0" all mean 1.0; patch numbers play no role (R-VER-5).
 * Anything that is not Major.Minor[.Patch] has no version at all.
 */
function majorMinor(version: string): string | undefined {
  if (version === "1.0") return version; // what nearly every client sends: no regex, no new string
  const match = /^(\d{1,9})\.(\d{1,9})(?:\.\d{1,9})?$/.exec(version);
  return match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
}

/**
 * The protocol version to serve this call with (R-VER-3..5): the first requested version this
 * server supports, as Major.Minor. Throws VersionNotSupportedError otherwise (FAILED_PRECONDITION).
 */
export function readVersion(metadata: CallMetadata, options: ReadVersionOptions): string {
  const sent = metadata.get(VERSION_KEY);
  if (sent.length === 1 && sent[0] === SUPPORTED_VERSIONS[0]) return SUPPORTED_VERSIONS[0]!; // what nearly every call sends
  const requested = listValues(metadata, VERSION_KEY);
  if (requested.length === 0) {
    if (options.allowMissing) return SUPPORTED_VERSIONS[0]!;
    // R-VER-4: no header is a 0.3 client; the error explains which header to send.
    if (SUPPORTED_VERSIONS.includes(IMPLIED_VERSION)) return IMPLIED_VERSION;
    throw new VersionNotSupportedError("", SUPPORTED_VERSIONS);
  }
  for (const version of requested) {
    const normalized = majorMinor(version);
    if (normalized !== undefined && SUPPORTED_VERSIONS.includes(normalized)) return normalized;
  }
  throw new VersionNotSupportedError(requested.join(","), SUPPORTED_VERSIONS);
}

/** The v0.3 name of the extensions header, which v0.3 calls may use instead (R-V03-62). */
export const V03_EXTENSIONS_KEY = "x-a2a-extensions";

/** Extension URIs the client opts into (R-EXT-1), in the order sent, each once; a v0.3 call's X-A2A-Extensions too. */
export function readRequestedExtensions(metadata: CallMetadata, protocolVersion?: "1.0" | "0.3"): readonly string[] {
  const legacy = protocolVersion === "0.3" ? listValues(metadata, V03_EXTENSIONS_KEY) : NO_EXTENSIONS;
  if (metadata.get(EXTENSIONS_KEY).length === 0 && legacy.length === 0) return NO_EXTENSIONS; // the usual call: nothing to split
  const uris = [...listValues(metadata, EXTENSIONS_KEY), ...legacy];
  return uris.length < 2 ? uris : [...new Set(uris)];
}

/**
 * R-EXT-3: every extension the agent card marks `required` must have been requested.
 * Requested extensions the agent does not declare are ignored (R-EXT-2). URIs compare exactly,
 * so one version of an extension never stands in for another (R-EXT-4).
 */
export function checkRequiredExtensions(requested: readonly string[], declared: readonly AgentExtension[]): void {
  let anyRequired = false;
  for (const ext of declared) anyRequired ||= ext.required;
  if (!anyRequired) return; // the usual card: nothing to check, nothing to allocate
  const asked = new Set(requested);
  const missing = declared.filter((ext) => ext.required && !asked.has(ext.uri)).map((ext) => ext.uri);
  if (missing.length > 0) throw new ExtensionSupportRequiredError([...new Set(missing)]);
}

/** The requested extensions this agent declares: the candidates it may activate for the call. */
export function declaredRequestedExtensions(requested: readonly string[], declared: readonly AgentExtension[]): string[] {
  const known = new Set(declared.map((ext) => ext.uri));
  return requested.filter((uri) => known.has(uri));
}

/** The value of the response's a2a-extensions header listing the activated extensions (R-EXT-5). */
export function formatActivatedExtensions(uris: Iterable<string>): string {
  return [...new Set(uris)].join(", ");
}
