/**
 * Sizes the project keeps (issue 32): one concept per file, so no src file over 500 lines; a plain
 * memory store; benchmarks that stay a tool beside the code, not a second code base; a README
 * that a user reads in one sitting.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

function files(dir: string, endings: readonly string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), endings) : endings.some((end) => e.name.endsWith(end)) ? [join(dir, e.name)] : [],
  );
}
const lines = (file: string) => readFileSync(file, "utf8").split("\n").length - 1;
const total = (list: readonly string[]) => list.reduce((sum, f) => sum + lines(f), 0);

test("no file in src/ is over 500 lines", () => {
  const long = files(join(ROOT, "src"), [".ts"])
    .map((f) => [relative(ROOT, f), lines(f)] as const)
    .filter(([, n]) => n > 500);
  expect(long).toEqual([]);
});

test("the memory store is at most 800 lines", () => {
  expect(total(files(join(ROOT, "src/storage/memory"), [".ts"]))).toBeLessThanOrEqual(800);
});

test("bench/ is at most 40% of src/'s lines", () => {
  const src = total(files(join(ROOT, "src"), [".ts"]));
  const bench = total(files(join(ROOT, "bench"), [".ts", ".mjs"]));
  expect(bench / src).toBeLessThanOrEqual(0.4);
});

test("README.md is at most 700 lines", () => {
  expect(lines(join(ROOT, "README.md"))).toBeLessThanOrEqual(700);
});
