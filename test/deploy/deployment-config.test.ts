/**
 * Issue 33 finding 14: the deployment files start and are safe. The server environment of every
 * deployment file (the compose replicas, each Kubernetes Deployment) goes through the real
 * configuration loader, as the server would read it at start-up in that container: it must load
 * (no refusal to listen beyond loopback, no restart loop), with authentication by API keys from a
 * mounted secret, metrics off the public card port, and a stop timeout that covers the shutdown.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { loadConfig, type Config } from "../../src/config/index.js";

const ROOT = new URL("../..", import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const pkg = JSON.parse(read("package.json")) as { version: string };
/** After the grace: last replies (src/main.ts FINAL_REPLIES_MS) and the shutdown hooks' margin (HOOK_MARGIN_MS). */
const AFTER_GRACE_MS = 1000 + 5000;
/** What a secretKeyRef stands for in the test: a value of the right shape. */
const SECRET_VALUES: Record<string, string> = { A2A_DATABASE_URL: "postgres://a2a:from-the-secret@db:5432/a2a" };

interface ServerEnv {
  readonly where: string;
  readonly env: Record<string, string>;
  /** Where mounted secrets appear in the container (a file for compose, a directory for Kubernetes). */
  readonly secretDirs: string[];
  readonly stopSeconds: number;
  readonly image: string;
}

function composeReplicas(): ServerEnv[] {
  const doc = parse(read("deploy/docker-compose.yml"), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; secrets?: string[]; stop_grace_period?: string; image?: string; build?: unknown }>;
    secrets?: Record<string, { file: string }>;
  };
  return Object.entries(doc.services)
    .filter(([, s]) => s.build !== undefined)
    .map(([name, s]) => ({
      where: `docker-compose.yml ${name}`,
      env: s.environment ?? {},
      secretDirs: (s.secrets ?? []).filter((n) => doc.secrets?.[n] !== undefined).map((n) => `/run/secrets/${n}`),
      stopSeconds: Number(/^(\d+)s$/.exec(s.stop_grace_period ?? "10s")?.[1]),
      image: s.image ?? "",
    }));
}

function kubernetesServers(): ServerEnv[] {
  return ["sqlite", "postgres"].flatMap((variant) =>
    parseAllDocuments(read(`deploy/kubernetes/${variant}/deployment.yaml`))
      .map((d) => d.toJS())
      .filter((d) => d?.kind === "Deployment")
      .flatMap((d) => {
        const pod = d.spec.template.spec;
        const secretVolumes = new Set((pod.volumes ?? []).filter((v: { secret?: unknown }) => v.secret).map((v: { name: string }) => v.name));
        return pod.containers.map(
          (c: { name: string; image: string; env: Array<{ name: string; value?: string }>; volumeMounts?: Array<{ name: string; mountPath: string }> }) => ({
            where: `kubernetes/${variant} ${c.name}`,
            env: Object.fromEntries(c.env.map((e) => [e.name, e.value ?? SECRET_VALUES[e.name] ?? ""])),
            secretDirs: (c.volumeMounts ?? []).filter((m) => secretVolumes.has(m.name)).map((m) => m.mountPath),
            stopSeconds: pod.terminationGracePeriodSeconds ?? 30,
            image: c.image,
          }),
        );
      }),
  );
}

/** The A2A_* variables the image's final stage sets (Dockerfile ENV): the files' own settings come on top. */
function imageEnv(): Record<string, string> {
  const dockerfile = read("Dockerfile");
  const last = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  const env: Record<string, string> = {};
  for (const [, block] of last.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm)) {
    for (const [, name, value] of block!.matchAll(/\b(A2A_[A-Z_]+)=(\S+)/g)) env[name!] = value!;
  }
  return env;
}

const servers = [...composeReplicas(), ...kubernetesServers()].map((s) => ({ ...s, env: { ...imageEnv(), ...s.env } }));

test("the deployment files name servers to check", () => {
  expect(servers.map((s) => s.where)).toEqual(
    expect.arrayContaining(["docker-compose.yml replica-a", "kubernetes/sqlite server", "kubernetes/postgres server"]),
  );
});

describe.each(servers.map((s) => [s.where, s] as const))("ISSUE33-14: %s", (_where, server) => {
  let config: Config;
  beforeAll(() => {
    // The container's own environment: the image's A2A_* variables and what the file sets, nothing from the test's.
    config = loadConfig({ argv: [], env: server.env, cwd: "/app" });
  });

  test("loads through the configuration loader (the server starts instead of refusing)", () => {
    expect(config.listen).toMatch(/^0\.0\.0\.0:/);
  });

  test("authenticates callers with API keys from a mounted secret", () => {
    expect(config.auth.anonymous).toBeUndefined();
    expect(config.auth.schemes).toContain("api-key");
    const file = config.auth.apiKeysFile ?? "";
    expect(server.secretDirs.some((secret) => file === secret || file.startsWith(`${secret}/`))).toBe(true);
  });

  test("serves metrics on a port of their own, not on the public card listener", () => {
    expect(config.metricsListen).not.toBe("card");
    expect(config.metricsListen).not.toBe(config.cardListen);
  });

  test("gives the server's whole shutdown room before the orchestrator's SIGKILL", () => {
    expect(server.stopSeconds * 1000).toBeGreaterThanOrEqual(config.shutdownGraceMs + AFTER_GRACE_MS);
  });

  test("names the image the README builds (the package version)", () => {
    expect(server.image).toBe(`a2a-grpc-server:${pkg.version}`);
  });
});

test("ISSUE33-14: the default shutdown grace ends, with its last replies, well inside docker's and podman's 10 s stop timeout", () => {
  const config = loadConfig({ argv: [], env: {}, cwd: "/app" });
  expect(config.shutdownGraceMs + 1000).toBeLessThanOrEqual(8000);
});

test("ISSUE33-14: the README and docs/operations.md build and run the image the deployment files name, and run npm ci before the container smoke test", () => {
  const readme = read("README.md");
  const operations = read("docs/operations.md");
  const offline = operations.slice(operations.indexOf("## Container: offline builds"), operations.indexOf("## Kubernetes"));
  const container = `${readme.slice(readme.indexOf("## Container"), readme.indexOf("## Repository layout"))}\n${offline}`;
  const imageLines = container.split("\n").filter((l) => /-t a2a-grpc-server/.test(l) || /^docker run /.test(l) || /container-smoke\.sh a2a/.test(l));
  expect(imageLines.length).toBeGreaterThanOrEqual(6);
  for (const line of imageLines) {
    expect([line, /a2a-grpc-server:(\S+)/.exec(line)?.[1]]).toEqual([line, pkg.version]);
  }
  const smoke = container.split("\n").findIndex((l) => l.startsWith("scripts/container-smoke.sh"));
  expect(smoke).toBeGreaterThan(0);
  expect(
    container
      .split("\n")
      .slice(0, smoke)
      .some((l) => /^npm ci\b/.test(l)),
  ).toBe(true);
});
