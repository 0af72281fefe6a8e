/**
 * The official @a2a-js/sdk's own HTTP server, set up as its README shows: an express app with
 * the SDK's jsonRpcHandler (and restHandler) over DefaultRequestHandler + InMemoryTaskStore, no
 * authentication, on 127.0.0.1:$BENCH_PORT (JSON-RPC at /a2a/jsonrpc, HTTP+JSON under /a2a/rest,
 * the paths of ours). BENCH_AGENT picks the executor (sdk-executors.ts): "trivial" (default), the
 * same work as bench/agents/trivial-agent.mjs, or "fanout", as bench/agents/fanout-agent.mjs.
 */
import express from "express";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { jsonRpcHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { FanoutExecutor, TrivialExecutor } from "./sdk-executors.js";
import { sdkCard } from "./sdk-peer.js";

const base = `http://127.0.0.1:${process.env.BENCH_PORT}`;
const fanout = process.env.BENCH_AGENT === "fanout";
const card = sdkCard(
  { name: "bench-http", description: "The benchmark's agent over HTTP", skill: { id: fanout ? "fanout" : "answer", description: "Answers" } },
  [
    { url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: `${base}/a2a/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
  ],
);
const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), fanout ? new FanoutExecutor() : new TrivialExecutor());
const app = express();
app.use("/a2a/jsonrpc", jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
app.use("/a2a/rest", restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(Number(process.env.BENCH_PORT), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
