import { SETTING_GROUPS, SETTINGS, type Setting, type SettingKey } from "./settings.js";

const PRECEDENCE = "Flags win over environment variables. An empty environment variable counts as unset.";
const TRACING =
  "Tracing takes the standard OpenTelemetry variables: OTEL_TRACES_EXPORTER=otlp (or console) turns it on, OTEL_EXPORTER_OTLP_ENDPOINT says where spans go.";

/** The settings as a Markdown table, for the docs. */
export function describeConfig(): string {
  const rows = Object.values(SETTINGS).map((s) => `| \`${s.env}\` | \`--${s.flag}\` | ${s.defaultText} | ${s.description} |`);
  return ["| Environment variable | Flag | Default | Meaning |", "| --- | --- | --- | --- |", ...rows, "", PRECEDENCE].join("\n");
}

/**
 * The settings for `--help` on a terminal: grouped by concern, the most-used first, each
 * line at most `width` columns, plain text (no Markdown).
 */
export function describeConfigForTerminal(width = 80): string {
  const lines: string[] = [];
  for (const group of groupsWithEverySetting()) {
    lines.push(`${group.title}:`);
    for (const key of group.keys) lines.push(...describeSetting(SETTINGS[key], width));
    lines.push("");
  }
  lines.push(...wrap(PRECEDENCE, width, ""), "", ...wrap(TRACING, width, ""));
  return lines.join("\n");
}

/** SETTING_GROUPS, plus an "Other" group for any setting left out of them (so --help misses none). */
function groupsWithEverySetting(): { title: string; keys: readonly SettingKey[] }[] {
  const grouped = new Set(SETTING_GROUPS.flatMap((g) => g.keys));
  const other = (Object.keys(SETTINGS) as SettingKey[]).filter((key) => !grouped.has(key));
  return other.length === 0 ? [...SETTING_GROUPS] : [...SETTING_GROUPS, { title: "Other", keys: other }];
}

function describeSetting(s: Setting, width: number): string[] {
  const flag = s.boolean ? `--${s.flag}` : `--${s.flag}=VALUE`;
  const text = `${s.description.replaceAll("`", "")} Default: ${s.defaultText}.`;
  return [...wrap(`${s.env} / ${flag}`, width, "  "), ...wrap(text, width, "      ")];
}

/** Word-wraps `text` to `width` columns, every line starting with `indent`; a word too long is cut. */
function wrap(text: string, width: number, indent: string): string[] {
  const room = width - indent.length;
  const lines: string[] = [];
  let line = "";
  for (let word of text.split(/\s+/).filter((w) => w !== "")) {
    while (word.length > room) {
      if (line !== "") lines.push(line);
      lines.push(word.slice(0, room));
      word = word.slice(room);
      line = "";
    }
    if (line === "") line = word;
    else if (line.length + 1 + word.length <= room) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== "") lines.push(line);
  return lines.map((l) => indent + l);
}
