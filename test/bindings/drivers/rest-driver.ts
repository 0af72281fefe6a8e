/**
 * The HTTP+JSON driver, written from the spec (R-HTTP-1..17), not from our server: the routes of
 * the proto's google.api.http annotations relative to the card's HTTP+JSON url, path fields in
 * the path (tenant as the first segment), other fields of GET/DELETE as camelCase query
 * parameters, POST bodies as ProtoJSON, `application/a2a+json`, the AIP-193 error body
 * {"error":{code,status,message,details}}, and SSE whose every data is a StreamResponse.
 */
import { fromJson, toJson, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import {
  AgentCardSchema,
  CancelTaskRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTaskPushNotificationConfigsResponseSchema,
  ListTasksRequestSchema,
  ListTasksResponseSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  type StreamResponse,
} from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { BindingError, type BindingDriver, type CallOptions } from "./driver.js";
import { detailsFromJson, httpHeaders, isEventStream, readEvents } from "./http-wire.js";

const MEDIA_TYPE = "application/a2a+json";

interface RestError {
  code: number;
  status: string;
  message: string;
  details?: unknown;
}

/** `base` is the HTTP+JSON interface url (no trailing slash, R-BIND-16). */
export function restDriver(base: string, defaultKey: string): BindingDriver {
  /** The route under the tenant's prefix (R-HTTP-3), with the query parameters. */
  const url = (tenant: string, path: string, query: JsonObject = {}): string => {
    const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
    return `${base}${tenant === "" ? "" : `/${encodeURIComponent(tenant)}`}${path}${search.size > 0 ? `?${search}` : ""}`;
  };

  async function call(method: string, target: string, options: CallOptions, body?: JsonValue): Promise<Response> {
    const response = await fetch(target, {
      method,
      headers: httpHeaders(options, defaultKey, MEDIA_TYPE),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.ok) return response;
    throw await failure(response);
  }

  async function json(method: string, target: string, options: CallOptions, body?: JsonValue): Promise<JsonValue> {
    const response = await call(method, target, options, body);
    expectMediaType(response);
    return (await response.json()) as JsonValue;
  }

  async function events(method: string, target: string, options: CallOptions, body?: JsonValue): Promise<StreamResponse[]> {
    const response = await call(method, target, options, body);
    if (!isEventStream(response)) throw new Error(`${target} answered ${response.headers.get("content-type")}, not a stream`);
    return readEvents(
      response,
      (data) => fromJson(StreamResponseSchema, data),
      (data) => {
        throw restFailure((data as unknown as { error: RestError }).error, undefined);
      },
      options.onEvent,
    );
  }

  return {
    name: "rest",
    send: async (request, options = {}) =>
      fromJson(
        SendMessageResponseSchema,
        await json("POST", url(request.tenant, "/message:send"), options, bodyOf(SendMessageRequestSchema, request, ["tenant"])),
      ),
    stream: (request, options = {}) => events("POST", url(request.tenant, "/message:stream"), options, bodyOf(SendMessageRequestSchema, request, ["tenant"])),
    get: async (request, options = {}) =>
      fromJson(
        TaskSchema,
        await json("GET", url(request.tenant, route`/tasks/${request.id}`, queryOf(GetTaskRequestSchema, request, ["tenant", "id"])), options),
      ),
    list: async (request, options = {}) =>
      fromJson(ListTasksResponseSchema, await json("GET", url(request.tenant, "/tasks", queryOf(ListTasksRequestSchema, request, ["tenant"])), options)),
    cancel: async (request, options = {}) =>
      fromJson(
        TaskSchema,
        await json("POST", url(request.tenant, route`/tasks/${request.id}:cancel`), options, bodyOf(CancelTaskRequestSchema, request, ["tenant", "id"])),
      ),
    // R-HTTP-1 row 6: GET, the verb the proto annotates (A-20).
    subscribe: (request, options = {}) => events("GET", url(request.tenant, route`/tasks/${request.id}:subscribe`), options),
    createPushConfig: async (request, options = {}) =>
      fromJson(
        TaskPushNotificationConfigSchema,
        await json(
          "POST",
          url(request.tenant, route`/tasks/${request.taskId}/pushNotificationConfigs`),
          options,
          bodyOf(TaskPushNotificationConfigSchema, request, ["tenant", "taskId"]),
        ),
      ),
    getPushConfig: async (request, options = {}) =>
      fromJson(
        TaskPushNotificationConfigSchema,
        await json("GET", url(request.tenant, route`/tasks/${request.taskId}/pushNotificationConfigs/${request.id}`), options),
      ),
    listPushConfigs: async (request, options = {}) =>
      fromJson(
        ListTaskPushNotificationConfigsResponseSchema,
        await json(
          "GET",
          url(
            request.tenant,
            route`/tasks/${request.taskId}/pushNotificationConfigs`,
            queryOf(ListTaskPushNotificationConfigsRequestSchema, request, ["tenant", "taskId"]),
          ),
          options,
        ),
      ),
    deletePushConfig: async (request, options = {}) => {
      // R-HTTP-7 / BQ-8: 200 with `{}`; any 2xx is success for a client (the SDK answers 204).
      await call("DELETE", url(request.tenant, route`/tasks/${request.taskId}/pushNotificationConfigs/${request.id}`), options);
    },
    extendedCard: async (request, options = {}) => fromJson(AgentCardSchema, await json("GET", url(request.tenant, "/extendedAgentCard"), options)),
    close: () => undefined,
  };
}

/** A path whose interpolated values (ids) are each one percent-encoded segment (R-HTTP-2). */
function route(literals: TemplateStringsArray, ...values: string[]): string {
  return literals.reduce((path, literal, i) => path + literal + (i < values.length ? encodeURIComponent(values[i]!) : ""), "");
}

/** The request's ProtoJSON without the fields the path carries (R-HTTP-4). */
function bodyOf<S extends DescMessage>(schema: S, request: MessageShape<S>, inPath: string[]): JsonObject {
  const body = { ...(toJson(schema, request) as JsonObject) };
  for (const field of inPath) delete body[field];
  return body;
}

/** GET/DELETE fields as query parameters, by their camelCase json names (R-HTTP-5, R-HTTP-6). */
function queryOf<S extends DescMessage>(schema: S, request: MessageShape<S>, inPath: string[]): JsonObject {
  return bodyOf(schema, request, inPath);
}

function expectMediaType(response: Response): void {
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith(MEDIA_TYPE)) throw new Error(`R-HTTP-7: a success answered ${type}, not ${MEDIA_TYPE}`);
}

/** The AIP-193 error body (R-HTTP-8); its `code` must be the HTTP status. */
async function failure(response: Response): Promise<BindingError> {
  const text = await response.text();
  let body: { error?: RestError } | undefined;
  try {
    body = JSON.parse(text) as { error?: RestError };
  } catch {
    body = undefined;
  }
  if (body?.error === undefined) throw new Error(`R-HTTP-8: ${response.status} without an error body: ${text.slice(0, 200)}`);
  return restFailure(body.error, response.status);
}

/** R-BIND-38 / R-HTTP-10: the HTTP status of each google.rpc code (its usual HTTP mapping). */
const HTTP_STATUS_OF: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

function restFailure(error: RestError, httpStatus: number | undefined): BindingError {
  if (httpStatus !== undefined && error.code !== httpStatus) throw new Error(`R-HTTP-8: error.code ${error.code} is not the HTTP status ${httpStatus}`);
  const want = HTTP_STATUS_OF[error.status];
  if (want !== undefined && error.code !== want) throw new Error(`R-HTTP-10: ${error.status} arrived as ${error.code}, not ${want}`);
  return new BindingError("rest", error.status, error.message, detailsFromJson(error.details));
}
