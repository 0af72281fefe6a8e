import { create, fromJson, toJson, type DescMessage, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import type { Response } from "undici";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ConnectionError } from "./exit-codes.js";
import { eventStream, jsonBody, send, type HttpCallOptions, type HttpRequest } from "./http-call.js";
import { httpError } from "./http-failure.js";
import type { A2ATransport, A2AMethods, In, Out, ResponseStream, StreamNames, UnaryNames } from "./transport.js";

/**
 * The HTTP+JSON binding (§11, R-HTTP-1): each operation is a route under the card's HTTP+JSON
 * url, tenant as the first path segment when there is one; POST bodies and GET/DELETE query
 * parameters (§11.5) are the ProtoJSON of the request message less the fields in the path;
 * streams are server-sent events of StreamResponse ProtoJSON.
 */

interface Route {
  readonly verb: HttpRequest["method"];
  /** The path after the base url (and tenant), from the request's ProtoJSON. */
  readonly path: (req: Record<string, unknown>) => string;
  /** Request fields the path carries (never repeated in the body or query). */
  readonly inPath: readonly string[];
}

const seg = (v: unknown) => encodeURIComponent(typeof v === "string" ? v : "");

const ROUTES: { readonly [K in keyof A2AMethods]: Route } = {
  sendMessage: { verb: "POST", path: () => "/message:send", inPath: [] },
  sendStreamingMessage: { verb: "POST", path: () => "/message:stream", inPath: [] },
  getTask: { verb: "GET", path: (r) => `/tasks/${seg(r.id)}`, inPath: ["id"] },
  listTasks: { verb: "GET", path: () => "/tasks", inPath: [] },
  cancelTask: { verb: "POST", path: (r) => `/tasks/${seg(r.id)}:cancel`, inPath: ["id"] },
  subscribeToTask: { verb: "GET", path: (r) => `/tasks/${seg(r.id)}:subscribe`, inPath: ["id"] },
  createTaskPushNotificationConfig: { verb: "POST", path: (r) => `/tasks/${seg(r.taskId)}/pushNotificationConfigs`, inPath: ["taskId"] },
  getTaskPushNotificationConfig: {
    verb: "GET",
    path: (r) => `/tasks/${seg(r.taskId)}/pushNotificationConfigs/${seg(r.id)}`,
    inPath: ["taskId", "id"],
  },
  listTaskPushNotificationConfigs: { verb: "GET", path: (r) => `/tasks/${seg(r.taskId)}/pushNotificationConfigs`, inPath: ["taskId"] },
  deleteTaskPushNotificationConfig: {
    verb: "DELETE",
    path: (r) => `/tasks/${seg(r.taskId)}/pushNotificationConfigs/${seg(r.id)}`,
    inPath: ["taskId", "id"],
  },
  getExtendedAgentCard: { verb: "GET", path: () => "/extendedAgentCard", inPath: [] },
};

const MEDIA_TYPE = "application/a2a+json";

export class RestTransport implements A2ATransport {
  readonly binding = "rest" as const;

  /** `base` is the interface url, to which the routes are appended. */
  constructor(
    private readonly base: URL,
    private readonly options: HttpCallOptions,
  ) {}

  async connect(): Promise<void> {}

  async unary<K extends UnaryNames>(name: K, init: MessageInitShape<In<K>>): Promise<Out<K>> {
    const { request, output } = this.request(name, init, MEDIA_TYPE);
    const response = await send(request, this.options);
    const body = await jsonBody(response);
    if (!response.ok) throw httpError(response.status, body);
    return decode(output, body ?? {}, response) as Out<K>;
  }

  stream<K extends StreamNames>(name: K, init: MessageInitShape<In<K>>): ResponseStream<Out<K>> {
    const { request, output } = this.request(name, init, "text/event-stream");
    return eventStream(
      (signal) => send(request, this.options, signal),
      async (response) => {
        // An error before the first event is an ordinary error body (R-HTTP-15).
        if (!response.ok) return httpError(response.status, await jsonBody(response));
        return new ConnectionError(`${this.base.origin} answered a stream request with HTTP ${response.status}, not an event stream`);
      },
      (event) => {
        let data: unknown;
        try {
          data = JSON.parse(event.data) as unknown;
        } catch {
          throw new ConnectionError(`${this.base.origin} sent an event that is not JSON`);
        }
        // An error after the first event: `event: error` with the §11.6 body (R-HTTP-17).
        if (event.event === "error" || (typeof data === "object" && data !== null && "error" in data)) throw httpError(500, data);
        return decode(output, data, undefined) as Out<K>;
      },
    );
  }

  close(): void {}

  private request(name: keyof A2AMethods, init: object, accept: string) {
    const method = A2AService.method[name];
    const input = method.input as DescMessage;
    const route = ROUTES[name];
    const fields = toJson(input, create(input, init as never)) as Record<string, unknown>;
    const tenant = typeof fields.tenant === "string" ? fields.tenant : "";
    const rest = Object.fromEntries(Object.entries(fields).filter(([k]) => k !== "tenant" && !route.inPath.includes(k)));
    const url = new URL(`${this.base.href.replace(/\/+$/, "")}${tenant ? `/${seg(tenant)}` : ""}${route.path(fields)}`);
    const request: HttpRequest =
      route.verb === "POST"
        ? { method: "POST", url, headers: { "content-type": MEDIA_TYPE, accept }, body: JSON.stringify(rest) }
        : { method: route.verb, url: withQuery(url, rest), headers: { accept } };
    return { request, output: method.output as DescMessage };
  }
}

/** §11.5: every field a query parameter named by its json name; scalars only (no v1.0 GET request has nested fields). */
function withQuery(url: URL, fields: Record<string, unknown>): URL {
  for (const [name, value] of Object.entries(fields)) {
    if (value !== null && typeof value !== "object") url.searchParams.set(name, String(value));
  }
  return url;
}

function decode(output: DescMessage, body: unknown, response: Response | undefined): unknown {
  try {
    return fromJson(output, body as JsonValue, { ignoreUnknownFields: true });
  } catch (e) {
    throw httpError(response?.status ?? 200, { error: { status: "INTERNAL", message: `the answer is not a ${output.name}: ${(e as Error).message}` } });
  }
}
