import { createServer, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { BinaryReader, type WireType } from "@bufbuild/protobuf/wire";

/**
 * A real OTLP/HTTP trace receiver on loopback, as a collector would be: it accepts
 * `POST /v1/traces` in either encoding the exporters send (application/x-protobuf, the default,
 * or application/json), decodes the ExportTraceServiceRequest (the protobuf by its field numbers
 * from opentelemetry-proto's trace.proto), and keeps the spans for the test to read.
 */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** "" for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly startNanos: bigint;
  readonly endNanos: bigint;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message: string };
  readonly resource: Readonly<Record<string, unknown>>;
  readonly scope: string;
  readonly events: ReadonlyArray<{ readonly name: string; readonly timeNanos: bigint; readonly attributes: Readonly<Record<string, unknown>> }>;
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string; readonly attributes: Readonly<Record<string, unknown>> }>;
}

export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Content types of the requests received. */
  readonly contentTypes: string[];
  /** The headers of each request received. */
  readonly headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
      contentTypes.push(type);
      headers.push(req.headers);
      try {
        spans.push(...(type === "application/json" ? decodeJson(body) : decodeProtobuf(body)));
      } catch (error) {
        res.writeHead(400, { "Content-Type": "text/plain" }).end(String(error));
        return;
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      if (type === "application/json") res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
      else res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

// ---- protobuf (opentelemetry-proto: collector/trace/v1, trace/v1, common/v1, resource/v1) ----

/** Calls `onField` for each field of the message in `bytes`; unknown fields are skipped. */
function fields(bytes: Uint8Array, onField: (fieldNo: number, reader: BinaryReader, wireType: WireType) => boolean): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    if (!onField(fieldNo, reader, wireType)) reader.skip(wireType, fieldNo);
  }
}

/** An ExportTraceServiceRequest's spans (protobuf), each with its resource and scope. */
export function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  fields(body, (no, r) => {
    if (no !== 1) return false; // ExportTraceServiceRequest.resource_spans
    let resource: Record<string, unknown> = {};
    const scopes: Uint8Array[] = [];
    fields(r.bytes(), (rsNo, rs) => {
      if (rsNo === 1) {
        fields(rs.bytes(), (resNo, res) => (resNo === 1 ? (Object.assign(resource, keyValue(res.bytes())), true) : false));
        return true;
      }
      if (rsNo === 2) return (scopes.push(rs.bytes()), true);
      return false;
    });
    for (const scopeSpans of scopes) {
      let scope = "";
      const spanBytes: Uint8Array[] = [];
      fields(scopeSpans, (ssNo, ss) => {
        if (ssNo === 1) {
          fields(ss.bytes(), (scNo, sc) => (scNo === 1 ? ((scope = sc.string()), true) : false));
          return true;
        }
        if (ssNo === 2) return (spanBytes.push(ss.bytes()), true);
        return false;
      });
      for (const bytes of spanBytes) out.push(decodeSpan(bytes, resource, scope));
    }
    resource = {};
    return true;
  });
  return out;
}

function decodeSpan(bytes: Uint8Array, resource: Record<string, unknown>, scope: string): ReceivedSpan {
  const span = {
    traceId: "",
    spanId: "",
    parentSpanId: "",
    name: "",
    kind: 0,
    startNanos: 0n,
    endNanos: 0n,
    attributes: {} as Record<string, unknown>,
    status: { code: 0, message: "" },
    events: [] as Array<ReceivedSpan["events"][number]>,
    links: [] as Array<ReceivedSpan["links"][number]>,
  };
  fields(bytes, (no, r) => {
    switch (no) {
      case 11: {
        const event = { name: "", timeNanos: 0n, attributes: {} as Record<string, unknown> };
        fields(r.bytes(), (eNo, e) => {
          if (eNo === 1) event.timeNanos = BigInt(e.fixed64());
          else if (eNo === 2) event.name = e.string();
          else if (eNo === 3) Object.assign(event.attributes, keyValue(e.bytes()));
          else return false;
          return true;
        });
        span.events.push(event);
        return true;
      }
      case 13: {
        const link = { traceId: "", spanId: "", attributes: {} as Record<string, unknown> };
        fields(r.bytes(), (lNo, l) => {
          if (lNo === 1) link.traceId = hex(l.bytes());
          else if (lNo === 2) link.spanId = hex(l.bytes());
          else if (lNo === 4) Object.assign(link.attributes, keyValue(l.bytes()));
          else return false;
          return true;
        });
        span.links.push(link);
        return true;
      }
      case 1:
        span.traceId = hex(r.bytes());
        return true;
      case 2:
        span.spanId = hex(r.bytes());
        return true;
      case 4:
        span.parentSpanId = hex(r.bytes());
        return true;
      case 5:
        span.name = r.string();
        return true;
      case 6:
        span.kind = r.int32();
        return true;
      case 7:
        span.startNanos = BigInt(r.fixed64());
        return true;
      case 8:
        span.endNanos = BigInt(r.fixed64());
        return true;
      case 9:
        Object.assign(span.attributes, keyValue(r.bytes()));
        return true;
      case 15:
        fields(r.bytes(), (sNo, s) => {
          if (sNo === 2) span.status.message = s.string();
          else if (sNo === 3) span.status.code = s.int32();
          else return false;
          return true;
        });
        return true;
      default:
        return false;
    }
  });
  return { ...span, resource, scope };
}

/** One KeyValue as { key: value }. */
function keyValue(bytes: Uint8Array): Record<string, unknown> {
  let key = "";
  let value: unknown;
  fields(bytes, (no, r) => {
    if (no === 1) key = r.string();
    else if (no === 2) value = anyValue(r.bytes());
    else return false;
    return true;
  });
  return { [key]: value };
}

function anyValue(bytes: Uint8Array): unknown {
  let value: unknown;
  fields(bytes, (no, r) => {
    switch (no) {
      case 1:
        value = r.string();
        return true;
      case 2:
        value = r.bool();
        return true;
      case 3:
        value = Number(r.int64());
        return true;
      case 4:
        value = r.double();
        return true;
      case 5: {
        const items: unknown[] = [];
        fields(r.bytes(), (aNo, a) => (aNo === 1 ? (items.push(anyValue(a.bytes())), true) : false));
        value = items;
        return true;
      }
      default:
        return false;
    }
  });
  return value;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

// ---- JSON (the OTLP/HTTP JSON mapping: hex ids, lowerCamelCase fields) ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}

function decodeJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString("utf8")) as {
    resourceSpans?: Array<{
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: Array<{ scope?: { name?: string }; spans?: Array<Record<string, unknown>> }>;
    }>;
  };
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const status = (s.status ?? {}) as { code?: number; message?: string };
        out.push({
          traceId: String(s.traceId ?? ""),
          spanId: String(s.spanId ?? ""),
          parentSpanId: String(s.parentSpanId ?? ""),
          name: String(s.name ?? ""),
          kind: Number(s.kind ?? 0),
          startNanos: BigInt(String(s.startTimeUnixNano ?? 0)),
          endNanos: BigInt(String(s.endTimeUnixNano ?? 0)),
          attributes: jsonAttributes(s.attributes as JsonKeyValue[] | undefined),
          status: { code: status.code ?? 0, message: status.message ?? "" },
          resource,
          scope: ss.scope?.name ?? "",
          events: ((s.events ?? []) as Array<{ name?: string; timeUnixNano?: string | number; attributes?: JsonKeyValue[] }>).map((e) => ({
            name: e.name ?? "",
            timeNanos: BigInt(String(e.timeUnixNano ?? 0)),
            attributes: jsonAttributes(e.attributes),
          })),
          links: ((s.links ?? []) as Array<{ traceId?: string; spanId?: string; attributes?: JsonKeyValue[] }>).map((l) => ({
            traceId: l.traceId ?? "",
            spanId: l.spanId ?? "",
            attributes: jsonAttributes(l.attributes),
          })),
        });
      }
    }
  }
  return out;
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? value.boolValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue);
  }
  return out;
}
