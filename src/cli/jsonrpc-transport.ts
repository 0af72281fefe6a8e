import { randomUUID } from "node:crypto";
import { create, fromJson, toJson, type DescMessage, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import type { Response } from "undici";
import { A2AService } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { ConnectionError } from "./exit-codes.js";
import { eventStream, isEventStream, jsonBody, send, type HttpCallOptions, type HttpRequest } from "./http-call.js";
import { jsonRpcError } from "./http-failure.js";
import type { A2ATransport, In, Out, ResponseStream, StreamNames, UnaryNames } from "./transport.js";

/**
 * The JSON-RPC 2.0 binding (§9): one POST per call to the card's JSONRPC url, the method named
 * as the gRPC RPC, params and result the ProtoJSON of the same lf.a2a.v1 messages; the two
 * streaming methods answer with server-sent events whose data are JSON-RPC responses.
 */
export class JsonRpcTransport implements A2ATransport {
  readonly binding = "jsonrpc" as const;

  constructor(
    private readonly endpoint: URL,
    private readonly options: HttpCallOptions,
  ) {}

  async connect(): Promise<void> {}

  async unary<K extends UnaryNames>(name: K, init: MessageInitShape<In<K>>): Promise<Out<K>> {
    const { request, id, output } = this.request(name, init, "application/json");
    const response = await send(request, this.options);
    const body = await jsonBody(response);
    return resultOf(body, response, id, output) as Out<K>;
  }

  stream<K extends StreamNames>(name: K, init: MessageInitShape<In<K>>): ResponseStream<Out<K>> {
    const { request, id, output } = this.request(name, init, "text/event-stream");
    return eventStream(
      (signal) => send(request, this.options, signal),
      async (response) => {
        // An error before the first event is an ordinary JSON-RPC response (R-JRPC-14).
        const body = isEventStream(response) ? undefined : await jsonBody(response);
        try {
          resultOf(body, response, id, output);
        } catch (e) {
          return e as Error;
        }
        return new ConnectionError(`${this.endpoint.origin} answered a stream request with HTTP ${response.status}, not an event stream`);
      },
      (event) => resultOf(parseEventData(event.data, this.endpoint), undefined, id, output) as Out<K>,
    );
  }

  close(): void {}

  private request(name: keyof typeof A2AService.method, init: object, accept: string) {
    const method = A2AService.method[name];
    const input = method.input as DescMessage;
    const id = randomUUID();
    const params = toJson(input, create(input, init as never));
    const request: HttpRequest = {
      method: "POST",
      url: this.endpoint,
      headers: { "content-type": "application/json", accept },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: method.name, params }),
    };
    return { request, id, output: method.output as DescMessage };
  }
}

function parseEventData(data: string, endpoint: URL): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    throw new ConnectionError(`${endpoint.origin} sent an event that is not JSON`);
  }
}

/** The result of a JSON-RPC response as the method's output message, or its error thrown. */
function resultOf(body: unknown, response: Response | undefined, id: string, output: DescMessage): unknown {
  const httpStatus = response?.status ?? 200;
  const envelope = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : undefined;
  if (envelope?.error !== undefined || httpStatus >= 400) throw jsonRpcError(envelope?.error, httpStatus);
  if (envelope?.jsonrpc !== "2.0" || !("result" in envelope))
    throw jsonRpcError({ code: -32603, message: `not a JSON-RPC response (HTTP ${httpStatus})` }, httpStatus);
  if (envelope.id !== id) throw jsonRpcError({ code: -32603, message: "the JSON-RPC response carries another request's id" }, httpStatus);
  try {
    return fromJson(output, (envelope.result ?? {}) as JsonValue, { ignoreUnknownFields: true });
  } catch (e) {
    throw jsonRpcError({ code: -32603, message: `the result is not a ${output.name}: ${(e as Error).message}` }, httpStatus);
  }
}
