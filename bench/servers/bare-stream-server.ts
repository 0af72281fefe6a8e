/**
 * The streaming floor: a bare grpc-js server whose SendStreamingMessage streams prebuilt
 * StreamResponse bytes (artifact updates appending `#seq=<i>;t=<ms>;` chunks to one artifact, as
 * bench/agents/fanout-agent.mjs publishes them), honouring write() and 'drain', without decoding
 * or encoding anything. What is left is grpc-js and HTTP/2 per message: the cost every
 * grpc-js server pays per event. Metadata `bench-events` says how many; `bench-yield: 1` gives an
 * event-loop turn after each event (as an agent awaiting each token). Listens on
 * 127.0.0.1:$BENCH_PORT; started by bench/lib/server-process.ts.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type ServerWritableStream } from "@grpc/grpc-js";
import { StreamResponseSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

const identity = (b: Buffer) => b;
const encode = (response: Parameters<typeof toBinary<typeof StreamResponseSchema>>[1]) => Buffer.from(toBinary(StreamResponseSchema, response));

function chunkEvent(i: number, last: boolean): Buffer {
  const text = `#seq=${i};t=${(performance.timeOrigin + performance.now()).toFixed(3)};`;
  return encode(
    create(StreamResponseSchema, {
      payload: {
        case: "artifactUpdate",
        value: {
          taskId: "bare-task",
          contextId: "bare-context",
          append: i > 0,
          lastChunk: last,
          artifact: { artifactId: "out", name: "out", parts: [{ content: { case: "text", value: text } }] },
        },
      },
    }),
  );
}
const snapshot = encode(
  create(StreamResponseSchema, { payload: { case: "task", value: { id: "bare-task", contextId: "bare-context", status: { state: TaskState.WORKING } } } }),
);
const completed = encode(
  create(StreamResponseSchema, {
    payload: { case: "statusUpdate", value: { taskId: "bare-task", contextId: "bare-context", status: { state: TaskState.COMPLETED } } },
  }),
);

/** Built before any call (up to BENCH_MAX_EVENTS), so a stream only writes bytes. */
const built = Array.from({ length: Number(process.env.BENCH_MAX_EVENTS ?? 100_000) }, (_, i) => chunkEvent(i, false));
function prebuilt(n: number): Buffer[] {
  if (n > built.length) throw new Error(`at most ${built.length} events are prebuilt`);
  return [...built.slice(0, n - 1), chunkEvent(n - 1, true)];
}

const server = new Server();
server.addService(
  {
    sendStreamingMessage: {
      path: "/lf.a2a.v1.A2AService/SendStreamingMessage",
      requestStream: false,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  },
  {
    sendStreamingMessage(call: ServerWritableStream<Buffer, Buffer>) {
      const n = Number(call.metadata.get("bench-events")[0] ?? 1000);
      const yieldEach = call.metadata.get("bench-yield")[0] === "1";
      const events = prebuilt(n);
      let i = 0;
      let gone = false;
      call.on("cancelled", () => (gone = true));
      call.write(snapshot);
      const pump = (): void => {
        while (!gone && i < n) {
          const flowing = call.write(events[i++]!);
          if (yieldEach) {
            if (flowing) setImmediate(pump);
            else call.once("drain", pump);
            return;
          }
          if (!flowing) {
            call.once("drain", pump);
            return;
          }
        }
        if (gone) return;
        call.write(completed);
        call.end();
      };
      pump();
    },
  },
);
server.bindAsync(`127.0.0.1:${process.env.BENCH_PORT}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
