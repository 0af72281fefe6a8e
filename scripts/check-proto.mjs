#!/usr/bin/env node
// Checks proto/lf/a2a/v1/a2a.proto against the vendored upstream A2A v1.0.1 proto
// (proto-reference/): `buf breaking` with buf.yaml's wire rules, then the two descriptors
// compared fact for fact (scripts/proto-contract.mjs). Needs nothing outside the repository
// (the Google API protos come from third_party/, which `npm install` fills).
// Prints "proto reference check holds: ..." and exits 0, or lists the differences and exits 1.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { contractDiff, contractLines, contractSize } from "./proto-contract.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const FILE = "lf/a2a/v1/a2a.proto";
// The A2A v0.3.0 proto (package a2a.v1), served beside v1.0 for v0.3 clients: vendored unchanged.
const V03_FILE = "a2a/v1/a2a.proto";

const buf = (args, cwd = ROOT) => execFileSync("npx", ["--no-install", "buf", ...args], { cwd, stdio: ["ignore", "inherit", "inherit"] });

/**
 * Builds the reference into `out` (buf picks the format by the extension: .binpb, .json):
 * a workspace of its own in a temp dir, the reference beside the Google API protos it imports.
 */
export function buildReference(out) {
  const dir = mkdtempSync(join(tmpdir(), "a2a-proto-reference-"));
  try {
    cpSync(join(ROOT, "proto-reference", "lf"), join(dir, "reference", "lf"), { recursive: true });
    cpSync(join(ROOT, "proto-reference", "a2a"), join(dir, "reference", "a2a"), { recursive: true });
    cpSync(join(ROOT, "third_party", "google", "api"), join(dir, "deps", "google", "api"), { recursive: true });
    writeFileSync(join(dir, "buf.yaml"), "version: v2\nmodules:\n  - path: reference\n  - path: deps\n");
    buf(["build", dir, "-o", out]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function fileOf(imagePath, name = FILE) {
  const file = JSON.parse(readFileSync(imagePath, "utf8")).file?.find((f) => f.name === name);
  if (file === undefined) throw new Error(`${imagePath} has no ${name}`);
  return file;
}

function check() {
  const dir = mkdtempSync(join(tmpdir(), "a2a-proto-check-"));
  try {
    const reference = join(dir, "reference.binpb");
    buildReference(reference);
    buildReference(join(dir, "reference.json"));
    try {
      buf(["breaking", "proto", "--against", reference]);
    } catch {
      console.log("proto reference check failed: buf breaking found wire changes against the published protos in proto-reference/ (above)");
      return 1;
    }
    buf(["build", "-o", join(dir, "ours.json")]);
    const want = contractLines(fileOf(join(dir, "reference.json")));
    const got = contractLines(fileOf(join(dir, "ours.json")));
    const size = contractSize(want);
    // A reference that yields nothing would make any proto pass: refuse it.
    if (size.messages === 0 || size.fields === 0 || size.rpcs === 0) {
      console.log(`proto reference check compared nothing: ${JSON.stringify(size)}`);
      return 1;
    }
    const diffs = contractDiff(want, got);
    for (const d of contractDiff(contractLines(fileOf(join(dir, "reference.json"), V03_FILE)), contractLines(fileOf(join(dir, "ours.json"), V03_FILE)))) {
      diffs.push(`${V03_FILE}: ${d}`);
    }
    for (const d of diffs) console.log(d);
    console.log(
      diffs.length === 0
        ? `proto reference check holds: buf breaking clean, ${size.messages} messages, ${size.fields} fields, ${size.enumValues} enum values, ${size.rpcs} rpcs as in A2A v1.0.1; ${V03_FILE} as in A2A v0.3.0`
        : `proto reference check failed: ${diffs.length} differences (- reference only, + ours only)`,
    );
    return diffs.length === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(check());
