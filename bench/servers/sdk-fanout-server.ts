/**
 * The fan-out benchmark's peer (bench/fan-out.ts): the official @a2a-js/sdk gRPC server
 * (DefaultRequestHandler + InMemoryTaskStore) with the executor that does what
 * bench/agents/fanout-agent.mjs does on our server (FanoutExecutor, sdk-executors.ts).
 * Listens on 127.0.0.1:$BENCH_PORT.
 */
import { FanoutExecutor } from "./sdk-executors.js";
import { serveSdkPeer } from "./sdk-peer.js";

serveSdkPeer(new FanoutExecutor(), {
  name: "bench-fanout",
  description: "Publishes a numbered burst of artifact updates when the benchmark says go",
  skill: { id: "fanout", description: "Streams numbered chunks" },
});
