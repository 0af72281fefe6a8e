/**
 * The peer: the official @a2a-js/sdk gRPC server (DefaultRequestHandler + InMemoryTaskStore)
 * with an agent doing the same work as bench/agents/trivial-agent.mjs: a task that goes
 * working, gets one small text artifact and completes. Listens on 127.0.0.1:$BENCH_PORT.
 */
import { TrivialExecutor } from "./sdk-executors.js";
import { serveSdkPeer } from "./sdk-peer.js";

serveSdkPeer(new TrivialExecutor(), { name: "bench", description: "Trivial agent for the benchmark", skill: { id: "answer", description: "Answers" } });
