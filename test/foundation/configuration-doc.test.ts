/**
 * docs/configuration.md is generated from the settings code (scripts/config-docs.ts): this fails
 * when a setting was added or changed without `npm run docs:config`, so the docs cannot drift.
 */
import { readFileSync } from "node:fs";
import { SETTINGS } from "../../src/config/settings.js";
import { CONFIGURATION_DOC, renderConfigurationDoc } from "../../scripts/config-docs.js";

test("docs/configuration.md is what `npm run docs:config` writes from src/config/settings.ts", () => {
  expect(readFileSync(CONFIGURATION_DOC, "utf8")).toBe(renderConfigurationDoc());
});

test("the generated page has a row for every setting, with its flag and default", () => {
  const doc = renderConfigurationDoc();
  for (const s of Object.values(SETTINGS)) {
    expect(doc).toMatch(new RegExp(`^\\| \`${s.env}\` +\\| \`--${s.flag}\` +\\| .+ \\|$`, "m"));
  }
});
