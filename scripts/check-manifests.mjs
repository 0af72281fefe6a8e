#!/usr/bin/env node
// Validates the Kubernetes manifests under deploy/kubernetes without a cluster:
// every resource against the Kubernetes OpenAPI schemas bundled in the npm package
// kubernetes-models (types, required fields, enums), then the rules these manifests
// must keep among themselves (probes on the gRPC port, selectors that select, the volume
// claim that exists, a termination grace that covers the server's shutdown grace, a health
// service the probes can reach without credentials).
// The schemas do not reject unknown fields: a misspelt optional field passes them.
//
// Usage: node scripts/check-manifests.mjs [DIR]   (default deploy/kubernetes)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = process.argv[2] ?? join(root, "deploy/kubernetes");
/** The server's own margin for its shutdown hooks after the grace period (src/main.ts HOOK_MARGIN_MS). */
const HOOK_MARGIN_MS = 5000;
/** The time the server gives the calls still open after the grace, to send their last replies (src/main.ts FINAL_REPLIES_MS). */
const FINAL_REPLIES_MS = 1000;
/** A2A_SHUTDOWN_GRACE_MS when unset (src/config/load-config.ts DEFAULT_SHUTDOWN_GRACE_MS). */
const DEFAULT_SHUTDOWN_GRACE_MS = 7000;
const errors = [];
const fail = (where, message) => errors.push(`${where}: ${message}`);

function yamlFiles(d) {
  return readdirSync(d).flatMap((name) => {
    const p = join(d, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

/** kubernetes-models module of an apiVersion: "v1" -> kubernetes-models/v1, "apps/v1" -> kubernetes-models/apps/v1. */
async function modelOf(apiVersion, kind) {
  try {
    const mod = await import(`kubernetes-models/${apiVersion}`);
    return mod[kind];
  } catch {
    return undefined;
  }
}

async function checkSchema(where, doc) {
  const Model = await modelOf(doc.apiVersion, doc.kind);
  if (!Model) return fail(where, `unknown apiVersion/kind ${doc.apiVersion} ${doc.kind}`);
  try {
    new Model(doc).validate();
  } catch (e) {
    fail(where, `schema: ${e.message}`);
  }
}

const matches = (selector = {}, labels = {}) => Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

function checkDeployment(where, d, siblings) {
  const spec = d.spec ?? {};
  const pod = spec.template?.spec ?? {};
  const labels = spec.template?.metadata?.labels;
  if (!matches(spec.selector?.matchLabels, labels)) fail(where, "spec.selector.matchLabels does not select the pod template's labels");
  if (pod.securityContext?.runAsNonRoot !== true) fail(where, "pod securityContext.runAsNonRoot must be true");
  if (typeof pod.securityContext?.runAsUser !== "number") fail(where, "pod securityContext.runAsUser must be numeric (the image's user is a name)");
  const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
  for (const c of pod.containers ?? []) {
    const at = `${where} container ${c.name}`;
    const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
    const env = new Map((c.env ?? []).map((e) => [e.name, e.value]));
    if (c.securityContext?.readOnlyRootFilesystem !== true) fail(at, "securityContext.readOnlyRootFilesystem must be true");
    if (c.securityContext?.allowPrivilegeEscalation !== false) fail(at, "securityContext.allowPrivilegeEscalation must be false");
    if (!c.resources?.requests?.cpu || !c.resources?.requests?.memory || !c.resources?.limits?.memory)
      fail(at, "resources need cpu and memory requests and a memory limit");
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      const p = c[probe];
      if (!p?.grpc) fail(at, `${probe} must be a gRPC probe (the health service)`);
      else if (p.grpc.port !== ports.get("grpc")) fail(at, `${probe} probes port ${p.grpc.port}, not the grpc port ${ports.get("grpc")}`);
    }
    const listen = env.get("A2A_LISTEN") ?? "";
    if (!listen.endsWith(`:${ports.get("grpc")}`)) fail(at, `A2A_LISTEN ${listen} does not listen on the grpc port ${ports.get("grpc")}`);
    if (!env.has("A2A_AUTH")) fail(at, "A2A_AUTH must be set explicitly (the server refuses to listen beyond loopback without it)");
    // gRPC probes carry no credentials: with authentication on, health must stay open (A2A_AUTH_OPEN_SERVICES).
    const open = (env.get("A2A_AUTH_OPEN_SERVICES") ?? "health,reflection").split(",").map((w) => w.trim().toLowerCase());
    if (env.get("A2A_AUTH") !== "none" && !open.includes("health"))
      fail(at, "A2A_AUTH_OPEN_SERVICES must keep health open: the gRPC probes send no credentials");
    const graceMs = Number(env.get("A2A_SHUTDOWN_GRACE_MS") ?? DEFAULT_SHUTDOWN_GRACE_MS);
    const needed = Math.ceil((graceMs + FINAL_REPLIES_MS + HOOK_MARGIN_MS) / 1000);
    if ((pod.terminationGracePeriodSeconds ?? 30) < needed)
      fail(
        where,
        `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} < A2A_SHUTDOWN_GRACE_MS + ${FINAL_REPLIES_MS + HOOK_MARGIN_MS} ms = ${needed} s`,
      );
    if (env.get("A2A_AUTH") === "none") fail(at, "A2A_AUTH=none: every caller would be the same principal; configure authentication");
    const keysFile = env.get("A2A_API_KEYS_FILE");
    if (keysFile !== undefined) {
      const mount = (c.volumeMounts ?? []).find((m) => keysFile.startsWith(`${m.mountPath}/`));
      if (!mount || !volumes.get(mount.name)?.secret) fail(at, `A2A_API_KEYS_FILE ${keysFile} is not in a mounted Secret`);
    }
    for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) fail(at, `volumeMount ${m.name} has no volume`);
    if (!(c.volumeMounts ?? []).some((m) => m.mountPath === "/tmp")) fail(at, "a writable /tmp (emptyDir) is needed with a read-only root filesystem");
    if (env.get("A2A_STORE") === "sqlite") {
      const data = (c.volumeMounts ?? []).find((m) => m.mountPath === env.get("A2A_DATA_DIR"));
      const claim = data && volumes.get(data.name)?.persistentVolumeClaim?.claimName;
      if (!claim) fail(at, "the SQLite store's A2A_DATA_DIR must be a PersistentVolumeClaim mount");
      else if (!siblings.some((s) => s.kind === "PersistentVolumeClaim" && s.metadata?.name === claim)) fail(at, `claim ${claim} is not defined beside it`);
      if ((spec.replicas ?? 1) !== 1) fail(where, "the SQLite store allows one replica only");
      if (spec.strategy?.type !== "Recreate") fail(where, "the SQLite store needs strategy Recreate (one process per data directory)");
    }
  }
}

function checkService(where, s, siblings) {
  const deployments = siblings.filter((d) => d.kind === "Deployment");
  if (!deployments.some((d) => matches(s.spec?.selector, d.spec?.template?.metadata?.labels))) fail(where, "selector matches no Deployment's pods beside it");
  const portNames = new Set(deployments.flatMap((d) => (d.spec?.template?.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.name))));
  for (const p of s.spec?.ports ?? [])
    if (typeof p.targetPort === "string" && !portNames.has(p.targetPort)) fail(where, `targetPort ${p.targetPort} is no container port`);
}

const files = yamlFiles(dir);
let resources = 0;
const byDir = new Map();
for (const file of files) {
  const docs = parseAllDocuments(readFileSync(file, "utf8"));
  for (const [i, doc] of docs.entries()) {
    const where = `${relative(root, file)}${docs.length > 1 ? `#${i + 1}` : ""}`;
    if (doc.errors.length) {
      fail(where, `YAML: ${doc.errors[0].message}`);
      continue;
    }
    const value = doc.toJS();
    if (!value) continue;
    if (!byDir.has(dirname(file))) byDir.set(dirname(file), []);
    byDir.get(dirname(file)).push({ where, file, value });
  }
}
for (const [d, docs] of byDir) {
  const kustomization = docs.find((x) => x.value.kind === "Kustomization");
  const listed = new Set((kustomization?.value.resources ?? []).map((r) => join(d, r)));
  if (!kustomization) fail(relative(root, d), "no kustomization.yaml");
  for (const r of listed) if (!docs.some((x) => x.file === r)) fail(relative(root, kustomization.file), `resource ${relative(d, r)} does not exist`);
  const siblings = docs.filter((x) => x.value.kind !== "Kustomization").map((x) => x.value);
  for (const { where, file, value } of docs) {
    if (value.kind === "Kustomization") continue;
    resources++;
    if (kustomization && !listed.has(file)) fail(where, "not listed in kustomization.yaml resources");
    await checkSchema(where, value);
    if (value.kind === "Deployment") checkDeployment(where, value, siblings);
    if (value.kind === "Service") checkService(where, value, siblings);
  }
}
if (resources === 0) fail(relative(root, dir), "no Kubernetes resources found");
if (errors.length) {
  for (const e of errors) console.error(`FAIL ${e}`);
  process.exit(1);
}
console.log(`manifests valid: ${resources} resources in ${byDir.size} kustomizations (${relative(root, dir)})`);
