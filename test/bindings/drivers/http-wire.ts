/**
 * What the two HTTP drivers share: headers (version, credential), typed error details from
 * ProtoJSON `Any` items, and reading a Server-Sent Events body (eventsource-parser, through the
 * JSON-RPC suite's reader) one event at a time.
 */
import { createRegistry, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { AnySchema, type Any } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema } from "../../../gen/es/google/rpc/error_details_pb.js";
import { readSse } from "../../jsonrpc/sse-reader.js";
import type { CallOptions } from "./driver.js";

const DETAILS = createRegistry(ErrorInfoSchema, BadRequestSchema);

/** A2A-Version (default 1.0), X-API-Key (default: the driver's key), A2A-Extensions and the media type. */
export function httpHeaders(options: CallOptions, defaultKey: string, mediaType: string): Record<string, string> {
  const headers: Record<string, string> = { "Content-Type": mediaType, Accept: `${mediaType}, text/event-stream` };
  const version = options.version === undefined ? "1.0" : options.version;
  if (version !== null) headers["A2A-Version"] = version;
  const key = options.apiKey === undefined ? defaultKey : options.apiKey;
  if (key !== null) headers["X-API-Key"] = key;
  if (options.extensions !== undefined) headers["A2A-Extensions"] = options.extensions.join(",");
  return headers;
}

/** The ErrorInfo and BadRequest items of an error's details (other kinds are not compared). */
export function detailsFromJson(items: unknown): Any[] {
  if (!Array.isArray(items)) return [];
  return items
    .filter((item) => /google\.rpc\.(ErrorInfo|BadRequest)$/.test(String((item as Record<string, unknown>)["@type"])))
    .map((item) => fromJson(AnySchema, item as JsonValue, { registry: DETAILS }));
}

export function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
}

/**
 * Reads every event of an SSE response: `onData` turns an ordinary event's data into the
 * stream's item (or throws its error); an `event: error` goes to `onError`, which throws.
 */
export async function readEvents<T>(
  response: Response,
  onData: (data: JsonValue) => T,
  onError: (data: JsonValue) => never,
  onEvent?: (item: T) => void,
): Promise<T[]> {
  const sse = readSse(response);
  const items: T[] = [];
  for (let event = await sse.next(); event !== undefined; event = await sse.next()) {
    const data = JSON.parse(event.data) as JsonValue;
    if (event.event === "error") onError(data);
    const item = onData(data);
    items.push(item);
    onEvent?.(item);
  }
  return items;
}
