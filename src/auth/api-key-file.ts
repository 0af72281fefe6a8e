/**
 * The API key file: one key per line, stored hashed, never in the clear.
 *
 *     # comment
 *     sha256:<64 hex digits> principal=<name> [tenants=<t1>,<t2>] [scopes=<s1>,<s2>]
 *
 * Keys are 32 random bytes (base64url, prefixed `a2a_`), so a plain SHA-256 is as good as a
 * slow password hash: nobody can guess a 256-bit key from its digest.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { RESERVED_TENANTS } from "./reserved-tenants.js";

export interface ApiKeyEntry {
  readonly principal: string;
  /** undefined = any tenant. */
  readonly tenants: readonly string[] | undefined;
  readonly scopes: readonly string[];
}

export const API_KEY_PREFIX = "a2a_";
const HASH_PREFIX = "sha256:";
const NAME = /^[^\s,=\u0000-\u001f\u007f]{1,256}$/;

/** The digest a key is stored under. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** A new random key. */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

/** The file line for `key`. */
export function apiKeyLine(key: string, entry: ApiKeyEntry): string {
  const parts = [`${HASH_PREFIX}${hashApiKey(key)}`, `principal=${entry.principal}`];
  if (entry.tenants !== undefined) parts.push(`tenants=${entry.tenants.join(",")}`);
  if (entry.scopes.length > 0) parts.push(`scopes=${entry.scopes.join(",")}`);
  return parts.join(" ");
}

/** Why a key file cannot be used: `FILE:LINE: reason` (line 0: the file itself cannot be read). */
export class ApiKeyFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${reason}` : `${file}: ${reason}`);
    this.name = "ApiKeyFileError";
  }
}

/** The keys of the file at `path`; throws an ApiKeyFileError naming the file and the first bad line. */
export function readApiKeyFile(path: string): Map<string, ApiKeyEntry> {
  return parseApiKeyFileAt(path, readApiKeyFileText(path));
}

export function readApiKeyFileText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new ApiKeyFileError(path, 0, `cannot read the file (${(e as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/** parseApiKeyFile, its error naming `path` and the line. */
export function parseApiKeyFileAt(path: string, text: string): Map<string, ApiKeyEntry> {
  try {
    return parseApiKeyFile(text);
  } catch (e) {
    const match = /^line (\d+): (.*)$/s.exec((e as Error).message);
    throw match ? new ApiKeyFileError(path, Number(match[1]), match[2]!) : e;
  }
}

/** The digests a key file's text mentions anywhere, also in lines that do not parse. */
export function digestsMentioned(text: string): Set<string> {
  return new Set([...text.matchAll(/sha256:([0-9a-f]{64})/gi)].map((m) => m[1]!.toLowerCase()));
}

/** Parses the file's text into digest → entry. Throws one Error naming the first bad line. */
export function parseApiKeyFile(text: string): Map<string, ApiKeyEntry> {
  const keys = new Map<string, ApiKeyEntry>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const bad = (why: string) => new Error(`line ${index + 1}: ${why} (expected "sha256:<hex> principal=<name> [tenants=a,b] [scopes=x,y]")`);
    const [hashField = "", ...fields] = line.split(/\s+/);
    const digest = hashField.startsWith(HASH_PREFIX) ? hashField.slice(HASH_PREFIX.length).toLowerCase() : "";
    if (!/^[0-9a-f]{64}$/.test(digest)) throw bad("the first field must be sha256: and 64 hex digits");
    if (keys.has(digest)) throw bad("this key is listed twice");
    const values = new Map<string, string>();
    for (const field of fields) {
      const eq = field.indexOf("=");
      const name = field.slice(0, eq);
      if (eq < 1 || !["principal", "tenants", "scopes"].includes(name)) throw bad(`unknown field ${JSON.stringify(field.slice(0, 40))}`);
      if (values.has(name)) throw bad(`${name} is given twice`);
      values.set(name, field.slice(eq + 1));
    }
    const principal = values.get("principal");
    if (principal === undefined || !NAME.test(principal)) throw bad("principal= is missing or not a plain name");
    const list = (name: string): string[] | undefined => {
      const value = values.get(name);
      if (value === undefined) return undefined;
      const items = value.split(",").filter((s) => s !== "");
      if (!items.every((s) => NAME.test(s))) throw bad(`${name}= holds an invalid name`);
      const reserved = name === "tenants" ? items.find((s) => RESERVED_TENANTS.has(s)) : undefined;
      if (reserved !== undefined) throw bad(`tenant ${JSON.stringify(reserved)} would be read as an HTTP+JSON route; choose another name`);
      return items;
    };
    keys.set(digest, { principal, tenants: list("tenants"), scopes: list("scopes") ?? [] });
  });
  return keys;
}
