import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { http } from "../../gen/es/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/es/google/api/http_pb.js";
import { matchPathTemplate, parsePathTemplate, specificity, splitRequestPath, type PathTemplate } from "./path-template.js";

/*
 * The routes of an HTTP+JSON binding, read at start-up from a service's google.api.http
 * annotations (R-HTTP-1, A-20: the proto is the routing table), additional bindings (the
 * `/{tenant}/...` variants) included. Nothing here knows A2A's version: the v1.0 binding and a
 * v0.3 one each give their own DescService.
 */

/** One route: an RPC, the HTTP method and path template that reach it, and where its body goes. */
export interface HttpRoute {
  readonly method: DescMethod;
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** The rule's `body`: "*" (every field not bound by the path), a field name, or "" (no body). */
  readonly body: string;
}

export type RouteMatch =
  | { readonly kind: "route"; readonly route: HttpRoute; readonly variables: Readonly<Record<string, string>> }
  /** The path is known but not with this HTTP method (R-HTTP-10: 405 + Allow). */
  | { readonly kind: "wrong-method"; readonly allow: readonly string[] }
  | { readonly kind: "none" };

export interface RouterOptions {
  /** More HTTP methods a route also answers (BQ-7: SubscribeToTask by POST too), by RPC name. */
  readonly alsoAccept?: Readonly<Record<string, readonly string[]>>;
  /** Routes the annotations lack (v0.3 Create's `tasks/*` path beside its annotated `task/*` typo), by RPC name. */
  readonly alsoRoute?: Readonly<Record<string, readonly ExtraRoute[]>>;
}

/** A route given beside the annotations: an HTTP method, a path template and the rule's body. */
export interface ExtraRoute {
  readonly httpMethod: string;
  readonly path: string;
  readonly body: string;
}

export class HttpRuleRouter {
  readonly routes: readonly HttpRoute[];

  constructor(service: DescService, options: RouterOptions = {}) {
    const routes: HttpRoute[] = [];
    for (const method of service.methods) {
      const rule = getOption(method, http);
      for (const each of [rule, ...rule.additionalBindings]) {
        const route = routeOf(method, each);
        if (route === undefined) continue;
        routes.push(route);
        for (const extra of options.alsoAccept?.[method.name] ?? []) routes.push({ ...route, httpMethod: extra });
      }
      for (const extra of options.alsoRoute?.[method.name] ?? [])
        routes.push(checkedRoute(method, extra.httpMethod, parsePathTemplate(extra.path), extra.body));
    }
    if (routes.length === 0) throw new Error(`${service.typeName} has no google.api.http routes`);
    this.routes = routes;
  }

  /** The route of a request path (relative to the binding's base, no query string). */
  match(httpMethod: string, path: string): RouteMatch {
    const split = splitRequestPath(path);
    if (split === undefined) return { kind: "none" };
    let best: string | undefined;
    let candidates: Array<{ route: HttpRoute; variables: Record<string, string> }> = [];
    for (const route of this.routes) {
      const variables = matchPathTemplate(route.template, split);
      if (variables === undefined) continue;
      const rank = specificity(route.template);
      if (best === undefined || rank > best) {
        best = rank;
        candidates = [];
      }
      if (rank === best) candidates.push({ route, variables });
    }
    if (candidates.length === 0) return { kind: "none" };
    const hit = candidates.find((c) => c.route.httpMethod === httpMethod);
    if (hit !== undefined) return { kind: "route", ...hit };
    return { kind: "wrong-method", allow: [...new Set(candidates.map((c) => c.route.httpMethod))] };
  }

  /** Every HTTP method some route answers (for CORS preflights). */
  get httpMethods(): readonly string[] {
    return [...new Set(this.routes.map((r) => r.httpMethod))];
  }
}

function routeOf(method: DescMethod, rule: HttpRule): HttpRoute | undefined {
  const { pattern } = rule;
  if (pattern.case === undefined) return undefined;
  const httpMethod = pattern.case === "custom" ? pattern.value.kind : pattern.case.toUpperCase();
  const path = pattern.case === "custom" ? pattern.value.path : pattern.value;
  return checkedRoute(method, httpMethod, parsePathTemplate(path), rule.body);
}

function checkedRoute(method: DescMethod, httpMethod: string, template: PathTemplate, body: string): HttpRoute {
  for (const variable of template.variables) {
    if (method.input.fields.find((f) => f.name === variable) === undefined)
      throw new Error(`${method.name}: path variable {${variable}} names no field of ${method.input.typeName}`);
  }
  return { method, httpMethod, template, body };
}
