/**
 * The ceiling: a bare grpc-js server that answers every SendMessage with the same prebuilt
 * response bytes (read from BENCH_RESPONSE_FILE), without decoding the request or encoding
 * anything. What is left is grpc-js and HTTP/2 framing, the cost every server pays.
 * Listens on 127.0.0.1:$BENCH_PORT. Started by bench/lib/server-process.ts.
 *
 * With BENCH_RELEASE_STREAMS=1 it also releases each closed HTTP/2 stream's listeners, as our
 * server does (src/protocol/call-retention.ts, the same code): what that alone saves a plain
 * grpc-js server (`npm run bench -- stream-release`).
 */
import { readFileSync } from "node:fs";
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from "@grpc/grpc-js";
import { releaseStreamOnClose } from "../../src/protocol/call-retention.js";

const response = readFileSync(process.env.BENCH_RESPONSE_FILE ?? "");
if (response.length === 0) throw new Error("BENCH_RESPONSE_FILE must name a file with the serialized response");
const releaseStreams = process.env.BENCH_RELEASE_STREAMS === "1";
const identity = (b: Buffer) => b;

const server = new Server();
server.addService(
  {
    sendMessage: {
      path: "/lf.a2a.v1.A2AService/SendMessage",
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  },
  {
    sendMessage(call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) {
      if (releaseStreams) releaseStreamOnClose(call);
      callback(null, response);
    },
  },
);
server.bindAsync(`127.0.0.1:${process.env.BENCH_PORT}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
