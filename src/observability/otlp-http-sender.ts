import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import { ProtobufTraceSerializer, type IExportTraceServiceResponse, type ISerializer } from "@opentelemetry/otlp-transformer";
import type { EncodedBatch, OtlpBatchSender } from "./otlp-span-processor.js";

/** The component type the SDK's own OTLP/HTTP span exporter reports itself as (its self-observability metrics). */
const COMPONENT_TYPE = "otlp_http_span_exporter";

/** Our batches are already ExportTraceServiceRequest bytes; the response is the SDK's to read (partial success). */
const serializer: ISerializer<EncodedBatch, IExportTraceServiceResponse> = {
  serializeRequest: (batch) => batch.bytes,
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/**
 * Sends encoded batches as OTLP/HTTP protobuf through the SDK's own HTTP export machinery, so that
 * everything the OTLP exporter reads from the environment holds: OTEL_EXPORTER_OTLP_ENDPOINT /
 * _TRACES_ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION, the TLS certificate variables, and its
 * retries with backoff on 429, 502, 503 and 504.
 */
export function otlpHttpProtobufSender(): OtlpBatchSender {
  const options = convertLegacyHttpOptions({}, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" });
  const delegate = createOtlpHttpExportDelegate(options, serializer, COMPONENT_TYPE, { name: "span", countItems: (batch) => batch.spans }, undefined);
  return {
    send: (batch, done) => delegate.export(batch, done),
    forceFlush: () => delegate.forceFlush(),
    shutdown: () => delegate.shutdown(),
  };
}
