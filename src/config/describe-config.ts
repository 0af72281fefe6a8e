import { SETTINGS } from "./settings.js";

/** The settings as a Markdown table, for `--help` and the README. */
export function describeConfig(): string {
  const rows = Object.values(SETTINGS).map((s) => `| \`${s.env}\` | \`--${s.flag}\` | ${s.defaultText} | ${s.description} |`);
  return [
    "| Environment variable | Flag | Default | Meaning |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    "Flags win over environment variables. An empty environment variable counts as unset.",
  ].join("\n");
}
