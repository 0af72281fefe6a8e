/**
 * What the OpenTelemetry SDK itself costs per traced SendMessage, in this process, apart from the
 * server: the two spans a call makes (the RPC's SERVER span and the agent run's invoke_agent span,
 * with the attributes tracing.ts gives them), started, ended and handed to a span processor; and
 * their OTLP/HTTP protobuf serialisation, in batches as the BatchSpanProcessor sends them. CPU time
 * (process.cpuUsage), so a loaded machine slows it less than it skews wall-clock figures.
 *
 *   npm run bench -- otel-spans
 *
 * Why: it is the floor under `npm run bench -- observability`'s tracing figure (the server's call
 * costs ~80 µs on a quiet machine; what the SDK needs per call is to be compared with that).
 */
import { ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { loadavg } from "node:os";
import { markdownTable } from "./lib/table.js";
import { Tracing } from "../src/observability/tracing.js";
import { endRunObservation, invokeObserved, startRunObservation } from "../src/lifecycle/runs/run-observation.js";
import type { AgentRun } from "../src/lifecycle/runs/agent-run.js";
import type { CallEnded } from "../src/service/call-observer.js";
import { Metadata, status } from "@grpc/grpc-js";

const CALLS = 100_000;
const BATCH = 2048;

export async function runOtelSpanCost(): Promise<string> {
  const kept: ReadableSpan[] = [];
  // Keeps the first batch's spans for the serialiser; drops the rest (so no queue grows).
  const processor: SpanProcessor = {
    onStart() {},
    onEnd: (span) => void (kept.length < BATCH && kept.push(span)),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const tracer = new BasicTracerProvider({ spanProcessors: [processor] }).getTracer("a2a-grpc-server");
  const rpcAttributes = { "rpc.system": "grpc", "rpc.service": "lf.a2a.v1.A2AService", "rpc.method": "SendMessage" };
  const call = (i: number) => {
    const server = tracer.startSpan("lf.a2a.v1.A2AService/SendMessage", { kind: SpanKind.SERVER, attributes: rpcAttributes }, ROOT_CONTEXT);
    const callContext = trace.setSpan(ROOT_CONTEXT, server);
    const run = tracer.startSpan(
      "invoke_agent bench",
      {
        kind: SpanKind.INTERNAL,
        attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bench", "gen_ai.conversation.id": `context-${i}` },
      },
      callContext,
    );
    trace.setSpan(callContext, run);
    run.setAttribute("a2a.task.id", `task-${i}`);
    run.end();
    server.setAttribute("rpc.grpc.status_code", 0);
    server.setAttribute("a2a.task.id", `task-${i}`);
    server.setAttribute("network.peer.address", "127.0.0.1");
    server.setAttribute("network.peer.port", 50_000);
    server.end();
  };
  for (let i = 0; i < 20_000; i++) call(i); // warm-up
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) call(i);
  const spansCpu = cpuSince(before) / CALLS;

  const batch = kept.slice(0, BATCH);
  for (let i = 0; i < 20; i++) ProtobufTraceSerializer.serializeRequest(batch);
  const rounds = 100;
  let bytes = 0;
  const serialiseBefore = process.cpuUsage();
  for (let i = 0; i < rounds; i++) bytes += ProtobufTraceSerializer.serializeRequest(batch)?.length ?? 0;
  const callsSerialised = (rounds * batch.length) / 2;
  const serialiseCpu = cpuSince(serialiseBefore) / callsSerialised;

  const tracingCpu = await tracingPerCall();
  return [
    "# What the OpenTelemetry SDK costs per traced call (two spans), in-process",
    "",
    `${new Date().toISOString()}; load average ${loadavg()[0]!.toFixed(2)}; shared machine. CPU time per call.`,
    "",
    markdownTable(
      ["step", "CPU µs per call"],
      [
        ["start, set attributes, end: the SERVER span and the invoke_agent span (the SDK's spans)", spansCpu.toFixed(2)],
        [
          `OTLP protobuf serialisation of both (batches of ${BATCH} spans; ${(bytes / rounds / (batch.length / 2)).toFixed(0)} B per call)`,
          serialiseCpu.toFixed(2),
        ],
        [
          "all of it as the server does it: src/observability's Tracing (call started, handler in its context, agent run started and ended, call ended) the SDK's BatchSpanProcessor and OTLP protobuf serialisation of both spans (no network)",
          tracingCpu.toFixed(2),
        ],
      ],
    ),
  ].join("\n");
}

function cpuSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

/** The Tracing class's hooks as the edge and the lifecycle call them for one SendMessage, with the SDK's BatchSpanProcessor and an exporter that serialises the batch and drops the bytes. */
export async function tracingPerCall(): Promise<number> {
  const exporter: SpanExporter = {
    export: (spans, done) => {
      ProtobufTraceSerializer.serializeRequest(spans);
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
  const processor = new BatchSpanProcessor(exporter, {
    maxQueueSize: 65_536,
    maxExportBatchSize: 2048,
    scheduledDelayMillis: 500,
    exportTimeoutMillis: 30_000,
  });
  const tracing = await Tracing.start({ env: {}, spanProcessors: [processor] });
  tracing.agentName = "bench";
  const metadata = new Metadata();
  metadata.set("a2a-version", "1.0");
  const call = (i: number) => {
    const ended: CallEnded = {
      service: "lf.a2a.v1.A2AService",
      method: "SendMessage",
      binding: "grpc",
      streaming: false,
      metadata,
      peer: "127.0.0.1:50000",
      remote: { remoteAddress: "127.0.0.1", remotePort: 50_000 },
      code: status.OK,
      details: undefined,
      durationMs: 1,
      principal: undefined,
      taskId: `task-${i}`,
      fields: {},
      error: undefined,
    };
    const state = tracing.observer.started!(ended);
    tracing.observer.around!(ended, state, () => {
      const run = { contextId: `context-${i}`, taskId: undefined } as unknown as AgentRun;
      const observation = startRunObservation(run, false);
      invokeObserved(observation, () => undefined);
      (run as { taskId: string }).taskId = `task-${i}`;
      endRunObservation(observation, run, false);
    });
    tracing.observer.ended!(ended, state);
  };
  for (let i = 0; i < 20_000; i++) call(i);
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) call(i);
  const cpu = cpuSince(before) / CALLS;
  await tracing.shutdown();
  return cpu;
}
