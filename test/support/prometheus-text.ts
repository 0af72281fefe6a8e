/**
 * Reads the Prometheus text exposition format as a scrape sees it: one sample per line,
 * `name{label="value",...} number`, comments skipped. Enough for tests to check values.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The families a scrape declares (# TYPE lines): name → type. */
export function metricTypes(text: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(match[1]!, match[2]!);
  return types;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined if none. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}

/** GET a URL on loopback and return status, content type and body. */
export async function scrape(url: string): Promise<{ status: number; contentType: string | null; body: string }> {
  const response = await fetch(url);
  return { status: response.status, contentType: response.headers.get("content-type"), body: await response.text() };
}
