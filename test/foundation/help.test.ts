/**
 * Operators first: `a2a-grpc-server --help` reads on an 80-column terminal, grouped by concern,
 * the most-used settings first; the full Markdown table stays for the docs.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describeConfig, describeConfigForTerminal, SETTINGS } from "../../src/config/index.js";
import { SETTING_GROUPS, type SettingKey } from "../../src/config/settings.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function help(): { status: number | null; stdout: string } {
  const { NODE_OPTIONS: _dropped, ...env } = process.env;
  const run = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts", "--help"], { cwd: ROOT, env, encoding: "utf8", timeout: 20_000 });
  return { status: run.status, stdout: run.stdout };
}

describe("--help", () => {
  test("the real process prints plain text wrapped for 80 columns, every setting once, by group, exit 0", () => {
    const { status, stdout } = help();
    expect(status).toBe(0);
    const lines = stdout.split("\n");
    expect(lines.filter((l) => l.length > 80)).toEqual([]);
    expect(lines.filter((l) => l.startsWith("|") || l.includes("`") || l.includes("| ---"))).toEqual([]);
    for (const s of Object.values(SETTINGS)) expect(lines.filter((l) => l.startsWith(`  ${s.env} / --${s.flag}`))).toHaveLength(1);
    // The groups in their order, each heading once; the most-used setting opens the list.
    const headings = lines.filter((l) => /^[A-Z][A-Za-z ]+:$/.test(l));
    expect(headings).toEqual(SETTING_GROUPS.map((g) => `${g.title}:`));
    expect(headings.slice(0, 3)).toEqual(["Server:", "Agent:", "Storage:"]);
    expect(lines[lines.indexOf("Server:") + 1]).toBe("  A2A_LISTEN / --listen=VALUE");
    // A setting sits under its own group's heading.
    const at = (text: string) => lines.findIndex((l) => l.startsWith(text));
    expect(at("  A2A_JWT_ISSUER")).toBeGreaterThan(at("Authentication:"));
    expect(at("  A2A_JWT_ISSUER")).toBeLessThan(at("Observability:"));
  });

  test("every setting is in exactly one group (a new setting must be given one)", () => {
    const grouped = SETTING_GROUPS.flatMap((g) => g.keys);
    expect([...grouped].sort()).toEqual((Object.keys(SETTINGS) as SettingKey[]).sort());
  });

  test("narrower terminals wrap too, and a word longer than the line is cut rather than overflow", () => {
    for (const width of [60, 40])
      expect(
        describeConfigForTerminal(width)
          .split("\n")
          .filter((l) => l.length > width),
      ).toEqual([]);
  });

  test("the docs keep the full Markdown table", () => {
    const table = describeConfig();
    for (const s of Object.values(SETTINGS)) expect(table).toContain(`| \`${s.env}\` | \`--${s.flag}\` |`);
  });
});
