import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package's version, read from its package.json: from src/ (tests, tsx) and from
 * dist/src/ (the built bins) the file sits at a different depth, so look upwards.
 */
export const PACKAGE_NAME = "a2a-grpc-server";

let cached: string | undefined;

export function packageVersion(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && pkg.version) return (cached = pkg.version);
    } catch {
      // not here: one level up
    }
    dir = dirname(dir);
  }
  return (cached = "unknown");
}
