/**
 * `a2a-grpc-server keygen --principal=NAME [--tenants=a,b] [--scopes=x,y]`: prints a new API key
 * (line 1, for the client; it is stored nowhere) and its line for A2A_API_KEYS_FILE (line 2).
 */
import { parseArgs } from "node:util";
import { apiKeyLine, newApiKey } from "./api-key-file.js";

export const KEYGEN_USAGE = "Usage: a2a-grpc-server keygen --principal=NAME [--tenants=t1,t2] [--scopes=s1,s2]";

/** Runs the command; returns the process exit code (2 for bad arguments, as for bad settings). */
export function runKeygen(argv: readonly string[], out: (text: string) => void, err: (text: string) => void): number {
  let values: { principal?: string; tenants?: string; scopes?: string };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { principal: { type: "string" }, tenants: { type: "string" }, scopes: { type: "string" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    err(`${(e as Error).message}\n${KEYGEN_USAGE}\n`);
    return 2;
  }
  const name = /^[^\s,=\u0000-\u001f\u007f]{1,256}$/;
  const list = (v: string | undefined) => (v === undefined ? undefined : v.split(",").filter((s) => s !== ""));
  const tenants = list(values.tenants);
  const scopes = list(values.scopes) ?? [];
  if (values.principal === undefined || !name.test(values.principal) || ![...(tenants ?? []), ...scopes].every((s) => name.test(s))) {
    err(`keygen needs --principal, and names without spaces, commas or "="\n${KEYGEN_USAGE}\n`);
    return 2;
  }
  const key = newApiKey();
  out(`${key}\n${apiKeyLine(key, { principal: values.principal, tenants, scopes })}\n`);
  err(
    "line 1: the key, for the client (x-api-key metadata); it is not stored anywhere\nline 2: append it to the A2A_API_KEYS_FILE file, then send the server SIGHUP\n",
  );
  return 0;
}
