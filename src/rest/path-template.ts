/*
 * google.api.http path templates (the grammar of google/api/http.proto): literal segments,
 * variables `{field}` (one segment) or `{field=tasks/*}` (a sub-pattern of literals and `*`,
 * each `*` one segment), and an optional custom verb `:cancel` after the last segment.
 */

/**
 * One segment of a template: a literal, or a `*`; either may be part of a variable, which
 * captures the whole of its sub-pattern (`{name=tasks/*}` binds "tasks/t1").
 */
type TemplateSegment = { readonly literal: string; readonly variable?: string } | { readonly wildcard: true; readonly variable: string };

/** A parsed template, matched against a request path. */
export interface PathTemplate {
  readonly text: string;
  readonly segments: readonly TemplateSegment[];
  readonly verb: string | undefined;
  /** The fields the variables set, in order (a variable over several segments gets them joined with "/"). */
  readonly variables: readonly string[];
}

/** Parses a template; throws on a shape this router does not serve (`**`, nested braces). */
export function parsePathTemplate(text: string): PathTemplate {
  if (!text.startsWith("/")) throw new Error(`path template ${text} must start with "/"`);
  let body = text.slice(1);
  let verb: string | undefined;
  const lastSlash = body.lastIndexOf("/");
  const lastBrace = body.lastIndexOf("}");
  const colon = body.lastIndexOf(":");
  if (colon > lastSlash && colon > lastBrace) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
  }
  const segments: TemplateSegment[] = [];
  const variables: string[] = [];
  for (const part of splitOutsideBraces(body)) {
    const variable = /^\{([A-Za-z_][A-Za-z0-9_.]*)(?:=([^{}]+))?\}$/.exec(part);
    if (variable === null) {
      if (part === "" || /[{}*]/.test(part)) throw new Error(`path template ${text}: bad segment ${part}`);
      segments.push({ literal: part });
      continue;
    }
    const field = variable[1]!;
    variables.push(field);
    for (const sub of (variable[2] ?? "*").split("/")) {
      if (sub === "*") segments.push({ wildcard: true, variable: field });
      else if (sub !== "" && !/[{}*]/.test(sub)) segments.push({ literal: sub, variable: field });
      else throw new Error(`path template ${text}: unsupported variable pattern ${variable[2]}`);
    }
  }
  return { text, segments, verb, variables };
}

function splitOutsideBraces(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "{") depth++;
    else if (body[i] === "}") depth--;
    else if (body[i] === "/" && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** A request path split for matching: its raw (still percent-encoded) segments. */
export interface RequestPath {
  readonly segments: readonly string[];
}

/** Splits a path ("/tasks/t1:cancel", no query) into its raw (still percent-encoded) segments. */
export function splitRequestPath(path: string): RequestPath | undefined {
  if (!path.startsWith("/")) return undefined;
  return { segments: path.slice(1).split("/") };
}

/**
 * The template's variables from the path, or undefined when it does not match. Segments are
 * percent-decoded after the split (R-HTTP-2), so an encoded "/" stays inside its segment and
 * an encoded ":" is never a verb.
 */
export function matchPathTemplate(template: PathTemplate, path: RequestPath): Record<string, string> | undefined {
  const raw = [...path.segments];
  if (raw.length !== template.segments.length) return undefined;
  if (template.verb !== undefined) {
    const last = raw[raw.length - 1]!;
    const suffix = `:${template.verb}`;
    if (!last.endsWith(suffix)) return undefined;
    raw[raw.length - 1] = last.slice(0, -suffix.length);
  }
  const captured = new Map<string, string[]>();
  for (let i = 0; i < raw.length; i++) {
    const segment = decodeSegment(raw[i]!);
    if (segment === undefined || segment === "") return undefined;
    const expected = template.segments[i]!;
    if ("literal" in expected && segment !== expected.literal) return undefined;
    if (expected.variable === undefined) continue;
    const values = captured.get(expected.variable) ?? [];
    values.push(segment);
    captured.set(expected.variable, values);
  }
  const variables: Record<string, string> = {};
  for (const [field, values] of captured) variables[field] = values.join("/");
  return variables;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined; // a malformed %-escape matches no route
  }
}

/**
 * How specific a template is, for choosing among templates that match one path (R-HTTP-3): one
 * with a custom verb beats one without (`/tasks/t1:cancel` is CancelTask, not GetTask "t1:cancel"),
 * then literal segments beat variables from the left (`/tasks/tasks` is GetTask "tasks", not
 * ListTasks of tenant "tasks"). Higher compares first.
 */
export function specificity(template: PathTemplate): string {
  return (template.verb === undefined ? "0" : "1") + template.segments.map((s) => ("literal" in s ? "1" : "0")).join("");
}
