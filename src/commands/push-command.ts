import { join } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config/index.js";
import { Ed25519Signer, formatSigningSecret, parseSigningSecret, tenantSigningSecret } from "../push/signature.js";
import { SIGNING_KEY_FILE_NAME, readKeyFile } from "../push/signing-key.js";

export const PUSH_COMMAND_USAGE = `Usage: a2a-grpc-server push public-key [--flag=value ...]
       a2a-grpc-server push tenant-secret --tenant=NAME

public-key      the key receivers verify webhook signatures with (Ed25519, v1a): whpk_... and PEM,
                from A2A_PUSH_SIGNING_KEY_FILE or the key the server made in A2A_DATA_DIR (same flags
                and variables as the server). A running server also publishes it: a2a push public-key.
tenant-secret   the HMAC secret (v1) of one tenant's receivers, derived from A2A_PUSH_SIGNING_SECRET
                (A2A_PUSH_SIGNING=hmac); give each tenant its own, never the root secret.`;

/** `a2a-grpc-server push ...` (issue 33 finding 5): what an operator hands to receivers. Returns the exit code. */
export function runPushCommand(argv: readonly string[], env: NodeJS.ProcessEnv, out: (text: string) => void, err: (text: string) => void): number {
  const [sub, ...rest] = argv;
  try {
    if (sub === "public-key") return publicKey(rest, env, out);
    if (sub === "tenant-secret") return tenantSecret(rest, env, out);
    err(`${sub === undefined ? "missing subcommand" : "unknown push subcommand"}\n${PUSH_COMMAND_USAGE}\n`);
    return 2;
  } catch (error) {
    err(`${(error as Error).message}\n`);
    return error instanceof ConfigError || error instanceof UsageProblem ? 2 : 1;
  }
}

class UsageProblem extends Error {}

function publicKey(argv: readonly string[], env: NodeJS.ProcessEnv, out: (text: string) => void): number {
  const config = loadConfig({ argv, env, stdoutIsTTY: false });
  if (config.push.signing !== "ed25519") throw new UsageProblem(`webhooks are not signed with Ed25519 here (A2A_PUSH_SIGNING=${config.push.signing})`);
  if (config.push.signingKeyFile === null && config.store === "memory") {
    throw new UsageProblem(
      "with the memory store and no A2A_PUSH_SIGNING_KEY_FILE the key lives in the running server only: a2a push public-key reads it from its card",
    );
  }
  const signer = new Ed25519Signer(readKeyFile(config.push.signingKeyFile ?? join(config.dataDir, SIGNING_KEY_FILE_NAME)));
  out(`${signer.publicKey}\n${signer.publicKeyPem}`);
  return 0;
}

function tenantSecret(argv: readonly string[], env: NodeJS.ProcessEnv, out: (text: string) => void): number {
  let tenant: string | undefined;
  try {
    ({ tenant } = parseArgs({ args: [...argv], options: { tenant: { type: "string" } }, strict: true, allowPositionals: false }).values);
  } catch (error) {
    throw new UsageProblem(`${(error as Error).message}\n${PUSH_COMMAND_USAGE}`);
  }
  if (tenant === undefined) throw new UsageProblem(`tenant-secret needs --tenant=NAME (--tenant= for the default tenant)\n${PUSH_COMMAND_USAGE}`);
  const root = env.A2A_PUSH_SIGNING_SECRET ?? "";
  let key: Buffer;
  try {
    key = parseSigningSecret(root);
  } catch (error) {
    // The secret is never repeated, not even a malformed one.
    throw new UsageProblem(`A2A_PUSH_SIGNING_SECRET: ${(error as Error).message}`);
  }
  out(`${formatSigningSecret(tenantSigningSecret(key, tenant))}\n`);
  return 0;
}
