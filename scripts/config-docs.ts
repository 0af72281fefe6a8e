/**
 * Writes docs/configuration.md from the settings code (src/config/settings.ts), so the full table
 * cannot drift from what the loader reads: `npm run docs:config` rewrites it,
 * `npm run docs:config -- --check` exits 1 when the committed file is stale
 * (test/foundation/configuration-doc.test.ts checks the same).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SETTINGS, type Setting } from "../src/config/settings.js";

export const CONFIGURATION_DOC = fileURLToPath(new URL("../docs/configuration.md", import.meta.url));

/** Sections by concern, in the order an operator needs them; a setting joins the first whose prefix it has. */
const SECTIONS: readonly { readonly title: string; readonly prefixes: readonly string[] }[] = [
  { title: "Listening and transport", prefixes: ["A2A_LISTEN", "A2A_TLS_", "A2A_MAX_MESSAGE", "A2A_KEEPALIVE", "A2A_SHUTDOWN", "A2A_PUBLIC_"] },
  { title: "Agent and agent card", prefixes: ["A2A_AGENT_", "A2A_CARD_", "A2A_STREAMING", "A2A_ALLOW_MISSING_VERSION"] },
  { title: "Storage", prefixes: ["A2A_STORE", "A2A_DATA_DIR", "A2A_DATABASE_", "A2A_LEASE_", "A2A_RETENTION"] },
  { title: "Streams", prefixes: ["A2A_STREAM"] },
  { title: "Push notifications", prefixes: ["A2A_PUSH_"] },
  { title: "Authentication", prefixes: ["A2A_AUTH", "A2A_JWT_", "A2A_API_KEYS", "A2A_MTLS_"] },
  { title: "Limits", prefixes: ["A2A_LIMIT_"] },
  { title: "Logs, metrics and tracing", prefixes: ["A2A_LOG_", "A2A_METRICS_", "A2A_TRAC", "A2A_OTEL"] },
];
const OTHER = "Other settings";

function sectionOf(s: Setting): string {
  return SECTIONS.find((section) => section.prefixes.some((p) => s.env.startsWith(p)))?.title ?? OTHER;
}

/** Markdown cell text: setting names read as code, a protocol decision links to its definition, pipes escaped. */
function cell(text: string): string {
  return text
    .replaceAll("|", "\\|")
    .replace(/\b(A2A_[A-Z0-9_]+)\b/g, "`$1`")
    .replace(/\b(?:ruling )?A-(\d+)\b/g, "[A-$1](protocol-decisions.md#a-$1)");
}

/** A default that is one value (`4194304`, optionally with a note in parentheses) reads as code. */
function defaultCell(text: string): string {
  const value = /^([^\s(]+)( \(.*\))?$/.exec(text);
  return value ? `\`${value[1]}\`${value[2] ?? ""}` : cell(text);
}

function table(settings: readonly Setting[]): string[] {
  return [
    "| Environment variable | Flag | Default | Meaning |",
    "| --- | --- | --- | --- |",
    ...settings.map((s) => `| \`${s.env}\` | \`--${s.flag}\` | ${defaultCell(s.defaultText)} | ${cell(s.description)} |`),
  ];
}

/** Through the repository's formatter (Biome), so the committed page passes `npm run lint` as written. */
function formatted(markdown: string): string {
  const biome = fileURLToPath(new URL("../node_modules/.bin/biome", import.meta.url));
  return execFileSync(biome, ["format", "--stdin-file-path=docs/configuration.md"], { input: markdown, encoding: "utf8" });
}

export function renderConfigurationDoc(): string {
  const all: readonly Setting[] = Object.values(SETTINGS);
  const titles = [...SECTIONS.map((s) => s.title), OTHER];
  const lines = [
    "# Configuration",
    "",
    "<!-- Generated from src/config/settings.ts by `npm run docs:config`; do not edit by hand. -->",
    "",
    "Every setting is an environment variable and a command-line flag of `a2a-grpc-server` (and",
    "`npm start`). Flags win over environment variables; an empty environment variable counts as",
    "unset. Invalid configuration stops start-up with one line naming the setting, and exit code 2.",
    "`a2a-grpc-server --help` prints the most-used settings; this page lists all of them.",
    "",
    "Tracing is configured by the OpenTelemetry SDK's standard `OTEL_*` variables (see the README,",
    "Metrics and tracing).",
  ];
  for (const title of titles) {
    const settings = all.filter((s) => sectionOf(s) === title);
    if (settings.length === 0) continue;
    lines.push("", `## ${title}`, "", ...table(settings));
  }
  return formatted(`${lines.join("\n")}\n`);
}

function main(args: readonly string[]): number {
  const fresh = renderConfigurationDoc();
  if (!args.includes("--check")) {
    writeFileSync(CONFIGURATION_DOC, fresh);
    return 0;
  }
  let committed = "";
  try {
    committed = readFileSync(CONFIGURATION_DOC, "utf8");
  } catch {
    // a missing file is stale too
  }
  if (committed === fresh) return 0;
  process.stderr.write("docs/configuration.md is stale: run `npm run docs:config` and commit it\n");
  return 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
