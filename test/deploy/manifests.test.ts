/**
 * deploy/kubernetes validates (scripts/check-manifests.mjs: bundled OpenAPI schemas and the
 * manifests' own rules), and the check fails on the mistakes it is there to catch.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = new URL("../..", import.meta.url).pathname;
const SOURCE = join(ROOT, "deploy/kubernetes");

async function check(dir: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run(process.execPath, [join(ROOT, "scripts/check-manifests.mjs"), dir], { cwd: ROOT });
    return { code: 0, out: stdout };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, out: err.stderr };
  }
}

/** A copy of the manifests with one file edited. */
function broken(file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), "a2a-k8s-"));
  cpSync(SOURCE, dir, { recursive: true });
  const path = join(dir, file);
  const before = readFileSync(path, "utf8");
  const after = edit(before);
  if (after === before) throw new Error(`the edit of ${file} changed nothing`);
  writeFileSync(path, after);
  return dir;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test("the manifests in deploy/kubernetes are valid", async () => {
  const r = await check(SOURCE);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^manifests valid: 6 resources in 2 kustomizations/);
});

test.each([
  [
    "a probe port that is not a number (schema)",
    "sqlite/deployment.yaml",
    (t: string) => t.replace("port: 50051\n              service", 'port: "grpc-port"\n              service'),
    /schema: .*port must be integer/,
  ],
  [
    "an enum value Kubernetes does not have (schema)",
    "sqlite/service.yaml",
    (t: string) => t.replace("type: ClusterIP", "type: Cluster"),
    /schema: .*type must be equal to one of the allowed values/,
  ],
  [
    "a termination grace shorter than the server's shutdown",
    "postgres/deployment.yaml",
    (t: string) => t.replace("terminationGracePeriodSeconds: 15", "terminationGracePeriodSeconds: 10"),
    /terminationGracePeriodSeconds 10 < /,
  ],
  ["two replicas on one SQLite volume", "sqlite/deployment.yaml", (t: string) => t.replace("replicas: 1", "replicas: 2"), /one replica only/],
  [
    "authentication that closes the health service the probes use",
    "postgres/deployment.yaml",
    (t: string) =>
      t.replace(
        /( +)- name: A2A_AUTH\n +value: api-key\n/,
        "$1- name: A2A_AUTH\n$1  value: api-key\n$1- name: A2A_AUTH_OPEN_SERVICES\n$1  value: reflection\n",
      ),
    /A2A_AUTH_OPEN_SERVICES must keep health open/,
  ],
  ["no explicit A2A_AUTH", "postgres/deployment.yaml", (t: string) => t.replace(/ +- name: A2A_AUTH\n +value: api-key\n/, ""), /A2A_AUTH must be set/],
  [
    "ISSUE33-14: anonymous callers (A2A_AUTH=none)",
    "sqlite/deployment.yaml",
    (t: string) => t.replace(/(- name: A2A_AUTH\n +value:) api-key\n/, "$1 none\n"),
    /A2A_AUTH=none: every caller would be the same principal/,
  ],
  [
    "ISSUE33-14: an API key file outside a mounted Secret",
    "postgres/deployment.yaml",
    (t: string) => t.replace("value: /etc/a2a/api-keys/keys", "value: /tmp/keys"),
    /A2A_API_KEYS_FILE \/tmp\/keys is not in a mounted Secret/,
  ],
  [
    "ISSUE33-14: a termination grace that leaves no room for the last replies",
    "sqlite/deployment.yaml",
    (t: string) => t.replace("terminationGracePeriodSeconds: 15", "terminationGracePeriodSeconds: 12"),
    /terminationGracePeriodSeconds 12 < A2A_SHUTDOWN_GRACE_MS \+ 6000 ms = 13 s/,
  ],
  [
    "a writable root filesystem",
    "sqlite/deployment.yaml",
    (t: string) => t.replace("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false"),
    /readOnlyRootFilesystem must be true/,
  ],
  [
    "a Service that selects nothing",
    "postgres/service.yaml",
    (t: string) => t.replace("app.kubernetes.io/name: a2a-grpc-server\n  ports", "app.kubernetes.io/name: other\n  ports"),
    /selector matches no Deployment/,
  ],
  [
    "a claim that is not defined",
    "sqlite/pvc.yaml",
    (t: string) => t.replace("name: a2a-grpc-server-data", "name: other-data"),
    /claim a2a-grpc-server-data is not defined/,
  ],
])("the check fails on %s", async (_what, file, edit, message) => {
  const dir = broken(file, edit);
  dirs.push(dir);
  const r = await check(dir);
  expect(r.code).toBe(1);
  expect(r.out).toMatch(message);
});
