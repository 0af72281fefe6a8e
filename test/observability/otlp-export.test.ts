import { unary } from "../foundation/helpers.js";
import { a2aMetadata, killAll, sendRequest, startService, tempDataDir } from "../durability/service-process.js";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";
import { until } from "../foundation/helpers.js";

/**
 * The real service process, configured only by the standard OTEL_* variables, exporting over
 * OTLP/HTTP to a receiver on loopback that decodes what arrives.
 */
let receiver: OtlpReceiver;
let data: ReturnType<typeof tempDataDir>;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
  data = tempDataDir();
});
afterEach(async () => {
  await killAll();
  await receiver.close();
  data.remove();
});

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";

describe("OTLP/HTTP export from a real server process", () => {
  test.each(["http/protobuf", "http/json"])(
    "OBS-TRACE: SendMessage with a traceparent yields a server span continuing it and an agent run span under it, exported as %s",
    async (protocol) => {
      const service = await startService(data.dir, {
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: "traced-a2a",
        OTEL_BSP_SCHEDULE_DELAY: "100",
      });
      const md = a2aMetadata();
      md.set("traceparent", `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01`);
      const { response, error } = await unary(service.client, service.client.sendMessage, sendRequest("done"), md);
      expect(error).toBeUndefined();
      const task = response!.payload!.$case === "task" ? response!.payload!.value : undefined;
      expect(task).toBeDefined();
      // A call without a traceparent starts a trace of its own.
      expect((await unary(service.client, service.client.sendMessage, sendRequest("done"), a2aMetadata())).error).toBeUndefined();

      await until(() => receiver.spans.filter((s) => s.name === "lf.a2a.v1.A2AService/SendMessage").length === 2, "both server spans", 10_000);
      expect(new Set(receiver.contentTypes)).toEqual(new Set([protocol === "http/json" ? "application/json" : "application/x-protobuf"]));

      const server = receiver.spans.find((s) => s.name === "lf.a2a.v1.A2AService/SendMessage" && s.traceId === TRACE_ID)!;
      expect(server).toMatchObject({ parentSpanId: CLIENT_SPAN_ID, kind: 2, scope: "a2a-grpc-server" });
      expect(server.attributes).toMatchObject({
        "rpc.system": "grpc",
        "rpc.service": "lf.a2a.v1.A2AService",
        "rpc.method": "SendMessage",
        "rpc.grpc.status_code": 0,
        "a2a.task.id": task!.id,
        "network.peer.address": "127.0.0.1",
      });
      expect(server.resource["service.name"]).toBe("traced-a2a");
      expect(server.endNanos).toBeGreaterThan(server.startNanos);

      await until(() => receiver.spans.some((s) => s.name.startsWith("invoke_agent") && s.traceId === TRACE_ID), "the run span", 10_000);
      const run = receiver.spans.find((s) => s.name.startsWith("invoke_agent") && s.traceId === TRACE_ID)!;
      expect(run.parentSpanId).toBe(server.spanId);
      expect(run.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": task!.contextId, "a2a.task.id": task!.id });

      const other = receiver.spans.find((s) => s.name === "lf.a2a.v1.A2AService/SendMessage" && s.traceId !== TRACE_ID)!;
      expect(other.parentSpanId).toBe("");
      // Health checks are not traced.
      expect(receiver.spans.some((s) => s.name.includes("grpc.health"))).toBe(false);
    },
    30_000,
  );

  test("OBS-TRACE: OTLP/HTTP protobuf honours OTEL_EXPORTER_OTLP_TRACES_ENDPOINT over OTEL_EXPORTER_OTLP_ENDPOINT, and OTEL_EXPORTER_OTLP_HEADERS", async () => {
    const service = await startService(data.dir, {
      OTEL_TRACES_EXPORTER: "otlp",
      // Nothing listens on port 1: spans sent there would be lost and the wait below would fail.
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`,
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-tenant=a2a,authorization=Bearer%20t0ken",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    expect((await unary(service.client, service.client.sendMessage, sendRequest("done"), a2aMetadata())).error).toBeUndefined();
    await until(() => receiver.spans.some((s) => s.name === "lf.a2a.v1.A2AService/SendMessage"), "the server span", 10_000);
    expect(receiver.headers[0]).toMatchObject({ "x-collector-tenant": "a2a", authorization: "Bearer t0ken", "content-type": "application/x-protobuf" });
    expect(receiver.spans.find((s) => s.name === "lf.a2a.v1.A2AService/SendMessage")!.attributes).toMatchObject({ "rpc.method": "SendMessage" });
  }, 30_000);
});
