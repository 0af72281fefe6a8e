/** Markdown tables for benchmark results, with ratios to baselines measured in the same run. */

export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(headers), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

export interface Metric<R> {
  readonly header: string;
  readonly value: (row: R) => number | undefined;
  /** Digits after the point. */
  readonly digits?: number;
  /** Show this metric's ratio to each baseline row. */
  readonly ratio?: boolean;
}

export function formatNumber(v: number | undefined, digits = 0): string {
  if (v === undefined || !Number.isFinite(v)) return "–";
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function formatRatio(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? "–" : `${v.toFixed(2)}×`;
}

/**
 * One row per subject, one column per metric; a ratio metric's cell reads
 * `value (r1 / r2)` with its ratio to each baseline (by `label`), the baseline's own cell
 * showing `1.00×`.
 */
export function comparisonTable<R>(rows: readonly R[], label: (row: R) => string, metrics: readonly Metric<R>[], baselines: readonly R[] = []): string {
  const baseNames = baselines.map(label).join(" / ");
  const headers = ["", ...metrics.map((m) => (m.ratio && baselines.length ? `${m.header} (× ${baseNames})` : m.header))];
  const body = rows.map((row) => [
    label(row),
    ...metrics.map((m) => {
      const v = m.value(row);
      const text = formatNumber(v, m.digits);
      if (!m.ratio || baselines.length === 0 || v === undefined) return text;
      const ratios = baselines.map((b) => formatRatio(v / (m.value(b) ?? NaN)));
      return `${text} (${ratios.join(" / ")})`;
    }),
  ]);
  return markdownTable(headers, body);
}

export interface Target {
  readonly what: string;
  readonly actual: number;
  readonly op: "<=" | ">=" | "<";
  readonly limit: number;
  /** How actual and limit read, e.g. formatRatio or bytes. */
  readonly format?: (v: number) => string;
}

export function targetsTable(targets: readonly Target[]): string {
  const rows = targets.map((t) => {
    const f = t.format ?? formatRatio;
    const met = t.op === "<=" ? t.actual <= t.limit : t.op === "<" ? t.actual < t.limit : t.actual >= t.limit;
    const op = t.op === "<=" ? "≤" : t.op === ">=" ? "≥" : "<";
    return [t.what, f(t.actual), `${op} ${f(t.limit)}`, met ? "met" : "**missed**"];
  });
  return markdownTable(["target", "measured", "wanted", ""], rows);
}
