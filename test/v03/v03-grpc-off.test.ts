/**
 * A2A_V03=off: the gRPC server serves lf.a2a.v1.A2AService only. a2a.v1.A2AService is
 * UNIMPLEMENTED (no such service) and reflection does not list it.
 */
import * as grpc from "@grpc/grpc-js";
import type { A2AServiceClient } from "../../gen/ts-proto/a2a/v1/a2a.js";
import { scriptedAgent } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { reflectedServices, unary, v03Client, v03Message, v03Send } from "./v03-grpc-client.js";

let s: A2ATestServer;
let v03: A2AServiceClient;
beforeAll(async () => {
  // serveV03 as main.ts sets it: on unless the configuration turns v0.3 off.
  s = await startA2AServer({ agent: scriptedAgent(async (ctx) => ctx.complete("ok")), serveV03: true, env: { A2A_V03: "off" } });
  v03 = v03Client(s.target);
});
afterAll(async () => {
  v03.close();
  await s.close();
});

test("A2A_V03=off: every a2a.v1.A2AService RPC is UNIMPLEMENTED", async () => {
  expect((await unary(v03, v03.sendMessage, v03Send(v03Message("hi")), new grpc.Metadata())).error?.code).toBe(grpc.status.UNIMPLEMENTED);
  expect((await unary(v03, v03.getAgentCard, {}, new grpc.Metadata())).error?.code).toBe(grpc.status.UNIMPLEMENTED);
});

test("A2A_V03=off: reflection lists only the v1.0 service (and health)", async () => {
  expect(await reflectedServices(s.target)).toEqual(["grpc.health.v1.Health", "lf.a2a.v1.A2AService"]);
});
