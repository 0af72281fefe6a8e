/**
 * BQ-12: a tenant is the first path segment of the `/{tenant}/…` routes, so a tenant spelled like
 * a literal first segment of another route cannot be addressed over HTTP+JSON. The reserved list
 * must cover every such segment the protos declare (1.0 and 0.3), and a key file that names one is
 * refused when it is read.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey, readApiKeyFile } from "../../src/auth/index.js";
import { RESERVED_TENANTS } from "../../src/auth/reserved-tenants.js";
import { REST_V03_ROUTER, REST_V1_ROUTER } from "../../src/rest/index.js";

test("BQ-12: every literal first segment of a 1.0 or 0.3 route (with its custom verb) is a reserved tenant name", () => {
  const firsts = [...REST_V1_ROUTER.routes, ...REST_V03_ROUTER.routes].flatMap(({ template }) => {
    const first = template.segments[0];
    if (first === undefined || !("literal" in first) || first.literal === undefined || "variable" in first) return [];
    const alone = template.segments.length === 1 && template.verb !== undefined ? [`${first.literal}:${template.verb}`] : [];
    return [first.literal, ...alone];
  });
  expect(firsts.length).toBeGreaterThan(0);
  expect(firsts.filter((segment) => !RESERVED_TENANTS.has(segment))).toEqual([]);
});

test("BQ-12: an API key file that limits a key to a route-colliding tenant is refused, naming the tenant", () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-reserved-tenant-"));
  try {
    const file = join(dir, "keys");
    for (const tenant of ["tasks", "v1", "message:send"]) {
      writeFileSync(file, `${apiKeyLine(newApiKey(), { principal: "alice", tenants: ["acme", tenant], scopes: [] })}\n`);
      expect(() => readApiKeyFile(file)).toThrow(new RegExp(`tenant "${tenant}" would be read as an HTTP\\+JSON route`));
    }
    writeFileSync(file, `${apiKeyLine(newApiKey(), { principal: "alice", tenants: ["acme", "tasks-eu"], scopes: [] })}\n`);
    expect([...readApiKeyFile(file).values()][0]?.tenants).toEqual(["acme", "tasks-eu"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
