/**
 * `a2a-grpc-server keys check FILE`: validates an API key file the way the server reads it, so an
 * operator can check an edit before sending SIGHUP (issue 33 #11). Exit 0 with a summary; 1 with
 * `FILE:LINE: reason` for the first bad line (or `FILE: reason` when it cannot be read); 2 for
 * bad arguments.
 */
import { ApiKeyFileError, readApiKeyFile } from "./api-key-file.js";

export const KEYS_USAGE = "Usage: a2a-grpc-server keys check FILE";

export function runKeysCommand(argv: readonly string[], out: (text: string) => void, err: (text: string) => void): number {
  if (argv.length !== 2 || argv[0] !== "check" || argv[1]!.startsWith("-")) {
    err(`${KEYS_USAGE}\n`);
    return 2;
  }
  const file = argv[1]!;
  let entries: ReturnType<typeof readApiKeyFile>;
  try {
    entries = readApiKeyFile(file);
  } catch (error) {
    if (!(error instanceof ApiKeyFileError)) throw error;
    err(`${error.message}\n`);
    return 1;
  }
  const principals = new Set([...entries.values()].map((e) => e.principal));
  const limited = [...entries.values()].filter((e) => e.tenants !== undefined).length;
  out(`${file}: ok: ${entries.size} key(s) for ${principals.size} principal(s), ${limited} limited to named tenants\n`);
  return 0;
}
