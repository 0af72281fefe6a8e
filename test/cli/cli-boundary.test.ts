/** The CLI is a client like any other: it imports generated types and libraries, nothing of the server. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const CLI = new URL("../../src/cli", import.meta.url).pathname;
const SRC = resolve(CLI, "..");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith(".ts") ? [join(dir, n)] : []));
}

test("src/cli imports nothing from src/ outside src/cli except version.ts", () => {
  const outside: string[] = [];
  for (const file of files(CLI)) {
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)) {
      const target = relative(SRC, resolve(file, "..", spec!));
      if (!target.startsWith("cli/") && !target.startsWith("../gen/") && target !== "version.js") outside.push(`${relative(SRC, file)} -> ${target}`);
    }
  }
  expect(outside).toEqual([]);
});
