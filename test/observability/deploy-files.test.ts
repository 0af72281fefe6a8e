import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { createMetrics } from "../../src/observability/metrics-catalogue.js";
import { metricTypes } from "../support/prometheus-text.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}/${path}`, "utf8");

/** Every series name the registry can expose, with the labels it carries (from the registry itself, not a list of ours). */
async function exposedSeries(): Promise<Map<string, Set<string>>> {
  const metrics = createMetrics({ activeCalls: () => new Map(), openStreams: () => 0, pushStats: () => undefined });
  const types = metricTypes(await metrics.registry.metrics());
  const series = new Map<string, Set<string>>();
  for (const [family, type] of types) {
    const metric = metrics.registry.getSingleMetric(family) as unknown as { labelNames?: string[] } | undefined;
    const labels = new Set(metric?.labelNames ?? []);
    const names = type === "histogram" ? [`${family}_bucket`, `${family}_sum`, `${family}_count`] : [family];
    for (const name of names) series.set(name, name.endsWith("_bucket") ? new Set([...labels, "le"]) : labels);
  }
  return series;
}

/** Labels every scraped series gets from Prometheus itself. */
const TARGET_LABELS = new Set(["job", "instance"]);
const OUR_PREFIXES = /^(rpc_|a2a_|process_|nodejs_)/;

/** What a PromQL expression refers to: metric names, with the labels its selectors and `by (...)` clauses use. */
function references(expr: string): { metrics: Map<string, string[]>; groupedBy: string[] } {
  const text = expr.replace(/\$\{?[A-Za-z_]+\}?/g, "1m"); // Grafana variables
  const metrics = new Map<string, string[]>();
  const groupedBy: string[] = [];
  for (const [, labels] of text.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g))
    groupedBy.push(
      ...labels!
        .split(",")
        .map((l) => l.trim())
        .filter(Boolean),
    );
  const stripped = text.replace(/\b(?:by|without)\s*\([^)]*\)/g, " ");
  for (const [, name, selector] of stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?/g)) {
    if (!OUR_PREFIXES.test(name!)) continue;
    const labels = [...(selector ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]!);
    metrics.set(name!, [...(metrics.get(name!) ?? []), ...labels]);
  }
  return { metrics, groupedBy };
}

/** The problems of one expression against the registry; empty = every name and label exists. */
function problems(expr: string, series: Map<string, Set<string>>): string[] {
  const { metrics, groupedBy } = references(expr);
  const out: string[] = [];
  if (metrics.size === 0) out.push(`no metric of ours in: ${expr}`);
  const known = new Set(TARGET_LABELS);
  for (const [name, labels] of metrics) {
    const labelNames = series.get(name);
    if (labelNames === undefined) {
      out.push(`unknown metric ${name}`);
      continue;
    }
    for (const l of labelNames) known.add(l);
    for (const label of labels) if (!labelNames.has(label) && !TARGET_LABELS.has(label)) out.push(`${name} has no label ${label}`);
  }
  for (const label of groupedBy) if (!known.has(label)) out.push(`grouped by ${label}, which none of its metrics has`);
  return out;
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(read("deploy/grafana-dashboard.json")) as {
    panels: Array<{ type: string; targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ type: string; definition?: string }> };
  };
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  for (const v of dashboard.templating.list) {
    if (v.type === "query") exprs.push(v.definition!.replace(/^label_values\((.*),\s*\w+\)$/, "$1"));
  }
  return exprs;
}

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: { severity?: string };
  annotations?: { summary?: string };
}

function alertRules(): AlertRule[] {
  const file = parse(read("deploy/prometheus-alerts.yml")) as { groups: Array<{ name: string; rules: AlertRule[] }> };
  return file.groups.flatMap((g) => g.rules);
}

describe("deploy/: dashboard and alert rules", () => {
  test("OBS-DEPLOY: the checker itself flags unknown metrics and labels", async () => {
    const series = await exposedSeries();
    expect(problems("sum(rate(a2a_no_such_metric_total[5m]))", series)).toEqual(["unknown metric a2a_no_such_metric_total"]);
    expect(problems('a2a_tasks_settled_total{task_id="x"}', series)).toEqual(["a2a_tasks_settled_total has no label task_id"]);
    expect(problems("sum by (state) (a2a_tasks_created_total)", series)).toEqual(["grouped by state, which none of its metrics has"]);
    expect(problems('sum by (state) (rate(a2a_tasks_settled_total{state="failed"}[5m]))', series)).toEqual([]);
  });

  test("OBS-DEPLOY: every metric and label the Grafana dashboard uses exists in the registry", async () => {
    const series = await exposedSeries();
    const exprs = dashboardExpressions();
    expect(exprs.length).toBeGreaterThan(20);
    expect(exprs.flatMap((e) => problems(e, series))).toEqual([]);
  });

  test("OBS-DEPLOY: every alert rule is complete, and every metric and label it uses exists in the registry", async () => {
    const series = await exposedSeries();
    const rules = alertRules();
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining(["A2AServerErrorRate", "A2APushBacklogOld", "A2AStreamBudgetEndings"]));
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels?.severity, summary: typeof rule.annotations?.summary }).toEqual({
        alert: expect.stringMatching(/^A2A[A-Za-z]+$/),
        severity: expect.stringMatching(/^(page|ticket)$/),
        summary: "string",
      });
      expect({ alert: rule.alert, problems: problems(rule.expr, series) }).toEqual({ alert: rule.alert, problems: [] });
    }
  });

  test("OBS-DEPLOY: docs/operations.md (the README's link for metrics) lists every metric of the service with its meaning", async () => {
    const page = read("docs/operations.md");
    const families = [
      ...metricTypes(await createMetrics({ activeCalls: () => new Map(), openStreams: () => 0, pushStats: () => undefined }).registry.metrics()).keys(),
    ];
    const ours = families.filter((f) => /^(rpc_|a2a_)/.test(f));
    expect(ours.length).toBeGreaterThan(15);
    expect(ours.filter((f) => !new RegExp(`^\\| \`${f}\` +\\|`, "m").test(page))).toEqual([]);
  });
});
