/**
 * The house's rules, read from src/'s own imports: folders depend only on lower layers (the lifecycle
 * core near the bottom, the entry points at the top), no file imports itself round a circle, and code
 * outside the core reaches it only through its front door, src/lifecycle/index.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const SRC = join(ROOT, "src");

/** Each room of src/ and its layer: a room may import rooms of lower layers only. */
const LAYERS: Readonly<Record<string, number>> = {
  "version.ts": 0,
  settings: 0,
  codec: 0,
  events: 0,
  lifecycle: 1,
  agents: 2,
  auth: 2,
  limits: 2,
  push: 2,
  streams: 2,
  service: 3,
  storage: 3,
  v03: 3.5,
  http: 4,
  protocol: 5,
  jsonrpc: 5,
  config: 5,
  observability: 6,
  cli: 6,
  "http-bindings.ts": 7,
  "app.ts": 8,
  commands: 8,
  "healthcheck.ts": 8,
  "listen-failure.ts": 8,
  "main.ts": 9,
  "index.ts": 9,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*"(\.{1,2}\/[^"]+)"|import\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g;

/** Every import between src/ files, as repository-relative paths (the .js specifier mapped to its .ts file). */
function imports(): Array<{ from: string; to: string }> {
  const edges: Array<{ from: string; to: string }> = [];
  for (const file of sourceFiles(SRC)) {
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const target = normalize(join(dirname(file), (m[1] ?? m[2])!)).replace(/\.js$/, ".ts");
      if (target.startsWith(SRC)) edges.push({ from: relative(SRC, file), to: relative(SRC, target) });
    }
  }
  return edges;
}

const roomOf = (path: string) => path.split("/")[0]!;

test("src/ has a layer for every room, and the layer table names no room that is gone", () => {
  const rooms = readdirSync(SRC).filter((n) => n.endsWith(".ts") || !n.includes("."));
  expect(rooms.filter((r) => LAYERS[r] === undefined)).toEqual([]);
  expect(Object.keys(LAYERS).filter((r) => !rooms.includes(r))).toEqual([]);
});

test("no import runs against the layering: every room imports only rooms of lower layers", () => {
  const upward = imports()
    .filter(({ from, to }) => roomOf(from) !== roomOf(to) && LAYERS[roomOf(to)]! >= LAYERS[roomOf(from)]!)
    .map(({ from, to }) => `${from} -> ${to}`);
  expect(upward).toEqual([]);
});

test("outside the lifecycle core, code imports it through its front door (src/lifecycle/index.ts) only", () => {
  const sideDoors = imports()
    .filter(({ from, to }) => roomOf(from) !== "lifecycle" && roomOf(to) === "lifecycle" && to !== "lifecycle/index.ts")
    .map(({ from, to }) => `${from} -> ${to}`);
  expect(sideDoors).toEqual([]);
});

test("no import cycle among src/ files (type-only imports count too)", () => {
  const next = new Map<string, string[]>();
  for (const { from, to } of imports()) next.set(from, [...(next.get(from) ?? []), to]);
  // Depth-first search; a node met again while still on the path closes a cycle.
  const state = new Map<string, "open" | "done">();
  const cycles: string[] = [];
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === "done") return;
    if (state.get(node) === "open") {
      cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      return;
    }
    state.set(node, "open");
    for (const to of next.get(node) ?? []) visit(to, [...path, node]);
    state.set(node, "done");
  };
  for (const node of next.keys()) visit(node, []);
  expect(cycles).toEqual([]);
});
