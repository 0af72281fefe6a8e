// One process of `npm run bench -- tracing-calls`: the Tracing class's hooks for one blocking
// SendMessage (call started, handler in its context, agent run started and ended, call ended) and
// the SDK's BatchSpanProcessor serialising both spans, with an exporter that drops the bytes, as bench/otel-span-cost.ts's
// tracingPerCall does, from the compiled build at argv[2] (a checkout with dist/). Prints one JSON line:
// the CPU µs per call of each block of argv[3] calls (argv[4] blocks).
import { Metadata, status } from "@grpc/grpc-js";

const [root, callsArg, blocksArg] = process.argv.slice(2);
const calls = Number(callsArg);
const blocks = Number(blocksArg);
const { BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
const { ProtobufTraceSerializer } = await import("@opentelemetry/otlp-transformer");
const { Tracing } = await import(`${root}/dist/src/observability/tracing.js`);
const { endRunObservation, invokeObserved, startRunObservation } = await import(`${root}/dist/src/lifecycle/run-observation.js`);
const exporter = {
  export: (spans, done) => {
    ProtobufTraceSerializer.serializeRequest(spans);
    done({ code: 0 });
  },
  shutdown: async () => {},
};
const processor = new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 2048, scheduledDelayMillis: 500, exportTimeoutMillis: 30_000 });
const tracing = await Tracing.start({ env: {}, spanProcessors: [processor] });
tracing.agentName = "bench";
const metadata = new Metadata();
metadata.set("a2a-version", "1.0");
const remote = { remoteAddress: "127.0.0.1", remotePort: 50_000 };
const call = (i) => {
  const taskId = `task-${i}`;
  const ended = {
    service: "lf.a2a.v1.A2AService",
    method: "SendMessage",
    streaming: false,
    metadata,
    peer: "127.0.0.1:50000",
    remote,
    code: status.OK,
    details: undefined,
    durationMs: 1,
    principal: undefined,
    taskId,
    fields: {},
    error: undefined,
  };
  const state = tracing.observer.started(ended);
  tracing.observer.around(ended, state, () => {
    const run = { contextId: `context-${i}`, taskId: undefined };
    const observation = startRunObservation(run, false);
    invokeObserved(observation, () => undefined);
    run.taskId = taskId;
    endRunObservation(observation, run, false);
  });
  tracing.observer.ended(ended, state);
};
for (let i = 0; i < 20_000; i++) call(i);
const cpu = [];
for (let b = 0; b < blocks; b++) {
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) call(i);
  const used = process.cpuUsage(before);
  cpu.push((used.user + used.system) / calls);
}
await tracing.shutdown();
process.stdout.write(`${JSON.stringify({ cpu })}\n`);
