/**
 * docs/architecture.md must describe the tree as it is (issue 32 item 10): every path it names
 * exists, every folder and top file of src/ appears in it, every bare file name it gives is a
 * file of the repository, every setting it names is one the server reads, and every benchmark
 * it names is one the runner knows. A file moved or deleted without the page following fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { SETTINGS } from "../../src/config/settings.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DOC = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");

/** Every path under one of the repository's folders that the page names, e.g. `src/push/ports/` or `test/x.test.ts`. */
function namedPaths(doc: string): string[] {
  const found = doc.match(/\b(?:src|test|bench|docs|scripts|deploy)\/[\w./-]*[\w/]/g) ?? [];
  return [...new Set(found)];
}

function walk(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    into.push(path);
    if (statSync(path).isDirectory()) walk(path, into);
  }
  return into;
}

const SRC = join(ROOT, "src");
const srcFolders = walk(SRC)
  .filter((p) => statSync(p).isDirectory())
  .map((p) => `src/${relative(SRC, p).split("\\").join("/")}/`);
const topFiles = readdirSync(SRC)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `src/${f}`);
const repositoryFileNames = new Set(["src", "test", "bench", "scripts"].flatMap((d) => walk(join(ROOT, d)).map((p) => p.slice(p.lastIndexOf("/") + 1))));

test("every src/, test/ and bench/ path docs/architecture.md names exists", () => {
  const paths = namedPaths(DOC);
  expect(paths.length).toBeGreaterThan(50);
  const missing = paths.filter((p) => !existsSync(join(ROOT, p)));
  expect(missing).toEqual([]);
});

test("every folder of src/ (sub-folders too) appears in docs/architecture.md", () => {
  expect(srcFolders).toContain("src/lifecycle/ports/");
  const absent = srcFolders.filter((folder) => !DOC.includes(folder) && !DOC.includes(`\`${folder.slice(0, -1)}\``));
  expect(absent).toEqual([]);
});

test("every top file of src/ appears in docs/architecture.md", () => {
  expect(topFiles).toContain("src/app.ts");
  expect(topFiles.filter((file) => !DOC.includes(file))).toEqual([]);
});

test("every bare file name in backticks (`task-writer.ts`) is a file of the repository", () => {
  const names = [...DOC.matchAll(/`([\w.-]+\.(?:ts|md|mjs|json))`/g)].map((m) => m[1]!);
  expect(names.length).toBeGreaterThan(20);
  expect([...new Set(names)].filter((name) => !repositoryFileNames.has(name))).toEqual([]);
});

test("every benchmark the page names is one bench/run.ts knows", () => {
  const runner = readFileSync(join(ROOT, "bench", "run.ts"), "utf8");
  const named = [...DOC.matchAll(/npm run bench -- ([\w:-]+)/g)].map((m) => m[1]!);
  expect(named.filter((name) => !new RegExp(`^\\s+"?${name}"?: \\{`, "m").test(runner))).toEqual([]);
});

test("every A2A_* setting the page names is one the server reads", () => {
  const known = new Set(Object.values(SETTINGS).map((s) => s.env));
  const named = [...new Set(DOC.match(/\bA2A_[A-Z0-9_]*[A-Z0-9]\b/g) ?? [])];
  expect(named.length).toBeGreaterThan(10);
  expect(named.filter((name) => !known.has(name))).toEqual([]);
});
