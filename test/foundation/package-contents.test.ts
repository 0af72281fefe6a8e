/**
 * What `npm pack` ships: what runs (compiled code, type declarations, both bins) and the
 * documents a package carries (README, LICENSE, CHANGELOG), nothing else. Needs a build
 * (npm ci's prepare runs it; so does npm run build).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { license: string; bin: Record<string, string>; main: string; types: string };

let files: string[];
beforeAll(async () => {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], { cwd: ROOT, timeout: 60_000 });
  files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
}, 70_000);

test("the package ships both bins, the entry point and its types, README, LICENSE and CHANGELOG", () => {
  for (const bin of Object.values(pkg.bin)) expect(files).toContain(bin);
  expect(Object.keys(pkg.bin).sort()).toEqual(["a2a", "a2a-grpc-server"]);
  expect(files).toEqual(expect.arrayContaining([pkg.main, pkg.types, "dist/src/healthcheck.js", "README.md", "LICENSE", "CHANGELOG.md", "package.json"]));
  for (const bin of Object.values(pkg.bin)) expect(readFileSync(`${ROOT}${bin}`, "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
});

test("nothing else: no build leftovers, source maps, sources, tests, benchmarks or scripts", () => {
  const extra = files.filter((f) => !/^dist\/(src|gen)\/.+\.(js|d\.ts)$/.test(f) && !["README.md", "LICENSE", "CHANGELOG.md", "package.json"].includes(f));
  expect(extra).toEqual([]);
  expect(files.filter((f) => /tsbuildinfo|\.map$|^scripts\/|^test\/|^bench\/|^src\//.test(f))).toEqual([]);
});

test("LICENSE is the full Apache License 2.0 text that package.json names", () => {
  expect(pkg.license).toBe("Apache-2.0");
  const license = readFileSync(`${ROOT}LICENSE`, "utf8");
  expect(license).toContain("Apache License\n                           Version 2.0, January 2004");
  expect(license).toContain("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION");
  expect(license).toContain("END OF TERMS AND CONDITIONS");
});
