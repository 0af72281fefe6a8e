import { toJson, type JsonValue } from "@bufbuild/protobuf";
import {
  A2AService as V03A2AService,
  StreamResponseSchema as V03StreamResponseSchema,
  type StreamResponse as V03StreamResponse,
} from "../../gen/es/a2a/v1/a2a_pb.js";
import type { CallMetadata } from "../service/face.js";
import { checkV03Version, V03_SERVICE_NAME } from "../v03/v03-service-version.js";
import { HttpRuleRouter, type HttpRoute } from "./http-rule-router.js";
import { createRestBinding, type RestBindingOptions, type RestCodec } from "./rest-binding.js";
import { decodeRestRequest } from "./rest-request.js";
import { v03RestFailure, v03TransportFailure } from "./rest-v03-errors.js";

/*
 * The A2A v0.3 HTTP+JSON binding (A-36: its own base, /a2a/v0.3/rest by default) on the generic
 * REST binding: the routes of a2a.v1.A2AService's own google.api.http annotations (the v0.3
 * proto), ProtoJSON of the v0.3 messages in and out (BQ-15, R-V03-15), SSE events of bare v0.3
 * StreamResponses, errors as {"code","message"} (R-V03-41). The handlers are the v0.3 face's
 * (src/v03/v03-service.ts), so what runs behind a route is what the v0.3 gRPC service runs.
 */

const JSON_TYPE = "application/json";
const A2A_JSON = "application/a2a+json";

/**
 * The proto's routes, plus: SubscribeToTask by POST too (the v0.3 SDK posts), and Create at
 * `tasks/*` (R-V03-17), where v0.3 §7.5 and every client put it; the proto annotates only its
 * `task/*` typo, which stays routed for clients built from the proto.
 */
export const REST_V03_ROUTER = new HttpRuleRouter(V03A2AService, {
  alsoAccept: { TaskSubscription: ["POST"] },
  alsoRoute: { CreateTaskPushNotificationConfig: [{ httpMethod: "POST", path: "/v1/{parent=tasks/*}/pushNotificationConfigs", body: "config" }] },
});

/** R-V03-16: v0.3 Go and Python clients post `null` where there is nothing to send; it means no body. */
const NO_BODY = Buffer.alloc(0);

/** The v0.3 codec; `v1Base` is where A2A 1.0 HTTP+JSON is served (null: not served), for the errors that point there. */
export function restV03Codec(v1Base: string | null): RestCodec {
  const toV1 = v1Base === null ? "" : `; A2A 1.0 HTTP+JSON is served at ${v1Base}`;
  return {
    contentType: JSON_TYPE,
    acceptsContentType(contentType) {
      if (contentType === undefined) return true;
      const type = contentType.split(";", 1)[0]!.trim().toLowerCase();
      return type === JSON_TYPE || type === A2A_JSON;
    },
    decodeRequest(route, variables, query, body) {
      const payload = body.toString("utf8").trim() === "null" ? NO_BODY : body;
      if (route.method.name !== "CreateTaskPushNotificationConfig") return decodeRestRequest(route, variables, query, payload);
      return decodeRestRequest(createRouteFor(route, payload), { ...variables, parent: taskParentOf(variables["parent"] ?? "") }, query, payload);
    },
    responseJson(method, _request, response) {
      const json = toJson(method.output, response) as { [key: string]: JsonValue };
      if (method.name === "ListTaskPushNotificationConfig") json["configs"] ??= []; // R-V03-18: the list is always there
      return json;
    },
    streamEvent(response) {
      return { data: JSON.stringify(toJson(V03StreamResponseSchema, response as V03StreamResponse)) };
    },
    failure: v03RestFailure,
    transportFailure(httpStatus, message) {
      // A-36, R-V03-60: a route this version lacks (a v1.0 route, GET /v1/tasks) is 404 naming the other base.
      return v03TransportFailure(httpStatus, httpStatus === 404 || httpStatus === 405 ? `${message} in A2A 0.3${toV1}` : message);
    },
  };
}

/**
 * R-V03-17: Create's body is the TaskPushNotificationConfig (the proto's `body: "config"`), or the
 * whole request, `{config: …}` alone (v0.3 §7.5) or with parent and configId; a body naming
 * `config` or `parent` is read as the whole request (its parent, if any, must be the path's, BQ-13).
 */
function createRouteFor(route: HttpRoute, body: Buffer): HttpRoute {
  const text = body.toString("utf8");
  if (text.trim() === "") return route;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return route; // the generic decoder refuses it, naming the body
  }
  const whole = typeof parsed === "object" && parsed !== null && ["config", "parent", "configId", "config_id"].some((key) => key in parsed);
  return whole ? { ...route, body: "*" } : route;
}

/** The task of Create's path as `tasks/{id}`: the typo route binds `task/{id}/pushNotificationConfigs`. */
function taskParentOf(bound: string): string {
  const typo = /^task\/([^/]+)\/pushNotificationConfigs$/.exec(bound);
  return typo === null ? bound : `tasks/${typo[1]}`;
}

/** A-36: on the 0.3 base a missing, empty or 0.3 A2A-Version is right; any other is refused naming the 1.0 base. */
function checkRestV03Version(basePath: string, v1Base: string | null) {
  const elsewhere = v1Base === null ? "" : `; A2A 1.0 HTTP+JSON is served at ${v1Base}`;
  const refusal = (shown: string) =>
    `A2A-Version ${shown} is not served at ${basePath}, which speaks A2A 0.3 (send no A2A-Version, or "A2A-Version: 0.3")${elsewhere}`;
  return (metadata: CallMetadata): void => checkV03Version(metadata, refusal);
}

export interface RestV03Options extends Omit<RestBindingOptions, "router" | "codec" | "serviceName" | "checkVersion" | "protocolVersion"> {
  /** The v1.0 HTTP+JSON base (config.restPath), named in the errors that send a client there; null when off. */
  readonly v1BasePath: string | null;
}

/** The v0.3 HTTP+JSON binding's handler for every path under `basePath`; `handlers` are the v0.3 face's. */
export function createRestV03Binding(options: RestV03Options) {
  const { v1BasePath, ...rest } = options;
  return createRestBinding({
    ...rest,
    router: REST_V03_ROUTER,
    codec: restV03Codec(v1BasePath),
    serviceName: V03_SERVICE_NAME,
    protocolVersion: "0.3",
    checkVersion: checkRestV03Version(options.basePath, v1BasePath),
  });
}
