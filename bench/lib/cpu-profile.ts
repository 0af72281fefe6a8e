import { readFileSync } from "node:fs";
import { markdownTable } from "./table.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  readonly name: string;
  readonly where: string;
  readonly area: string;
  readonly micros: number;
}

/** Where a script lives, shortened: a package name, a project path, or a Node internal. */
function areaOf(url: string): { where: string; area: string } {
  if (url === "") return { where: "", area: "(V8 / native)" };
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length);
    const parts = rest.split("/");
    const pkg = parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
    return { where: rest, area: pkg };
  }
  if (url.startsWith("node:")) return { where: url, area: "node core" };
  const root = process.cwd().replace(/\\/g, "/");
  const path = url.replace(/^file:\/\//, "").replace(`${root}/`, "");
  const area = path
    .split("/")
    .slice(0, path.startsWith("dist/") ? 3 : 2)
    .join("/");
  return { where: path, area };
}

/**
 * Inclusive time per function (self + callees, counted once per sample even when
 * recursive), for functions whose area passes `keep`: which of our functions, or which
 * library entry points, the time is spent under.
 */
export function inclusiveTimes(file: string, keep: (t: { name: string; area: string }) => boolean): SelfTime[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const info = new Map<number, { key: string; t: SelfTime } | null>();
  const infoOf = (id: number) => {
    if (!info.has(id)) {
      const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
      const { where, area } = areaOf(url);
      const name = functionName || "(anonymous)";
      const t = { name, where: where ? `${where}:${lineNumber + 1}` : "", area, micros: 0 };
      info.set(id, keep(t) ? { key: `${name} ${t.where}`, t } : null);
    }
    return info.get(id)!;
  };
  const totals = new Map<string, SelfTime>();
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const seen = new Set<string>();
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const fi = infoOf(id);
      if (!fi || seen.has(fi.key)) continue;
      seen.add(fi.key);
      const prev = totals.get(fi.key) ?? fi.t;
      totals.set(fi.key, { ...prev, micros: prev.micros + dt });
    }
  }
  return [...totals.values()].sort((a, b) => b.micros - a.micros);
}

/** Self time per function of a .cpuprofile, largest first. */
export function selfTimes(file: string): { total: number; functions: SelfTime[]; areas: Map<string, number> } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const perNode = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; the time after it is the next delta.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    perNode.set(profile.samples[i]!, (perNode.get(profile.samples[i]!) ?? 0) + dt);
  }
  const perFunction = new Map<string, SelfTime>();
  const areas = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of perNode) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    const { where, area } = areaOf(url);
    const name = functionName || "(anonymous)";
    const key = `${name} ${where}:${lineNumber}`;
    const prev = perFunction.get(key);
    perFunction.set(key, { name, where: where ? `${where}:${lineNumber + 1}` : "", area, micros: (prev?.micros ?? 0) + micros });
    const areaKey = url === "" ? name : area;
    areas.set(areaKey, (areas.get(areaKey) ?? 0) + micros);
    total += micros;
  }
  return { total, functions: [...perFunction.values()].sort((a, b) => b.micros - a.micros), areas };
}

/** Markdown: top functions by self time, and self time by package / project folder. */
export function profileSummary(file: string, calls: number, top = 25): string {
  const { total, functions, areas } = selfTimes(file);
  const pct = (v: number) => `${((100 * v) / total).toFixed(1)}%`;
  const perCall = (v: number) => (v / calls).toFixed(2);
  const fnTable = markdownTable(
    ["self %", "µs/call", "function", "where"],
    functions.slice(0, top).map((f) => [pct(f.micros), perCall(f.micros), f.name, f.where]),
  );
  const areaTable = markdownTable(
    ["self %", "µs/call", "area"],
    [...areas]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([a, v]) => [pct(v), perCall(v), a]),
  );
  // Where the time is spent *under*: the project's functions and protobuf's entry points.
  const entryPoints = new Set(["toBinary", "fromBinary", "clone", "create", "fromJson", "toJson"]);
  const inclusive = inclusiveTimes(
    file,
    (t) => t.area.startsWith("dist/") || t.area.startsWith("src/") || (t.area === "@bufbuild/protobuf" && entryPoints.has(t.name)),
  );
  const inclusiveTable = markdownTable(
    ["incl. %", "µs/call", "function", "where"],
    inclusive.slice(0, top).map((f) => [pct(f.micros), perCall(f.micros), f.name, f.where]),
  );
  return [
    `Sampled main-thread time: ${perCall(total)} µs/call over ${calls.toLocaleString("en-US")} calls.`,
    "Self time by area:",
    areaTable,
    "Top functions by self time:",
    fnTable,
    "Inclusive time (self + callees) of the project's functions and protobuf entry points:",
    inclusiveTable,
  ].join("\n\n");
}
