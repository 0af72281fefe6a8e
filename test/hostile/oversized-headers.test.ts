/**
 * What the HTTP/2 layer does with header blocks too large to decode, before any code of ours runs
 * (issue #18: the hostile run's "streams reset for oversized header blocks"): nghttp2 closes the
 * sender's connection (GOAWAY) for a header field over 64 KiB once HPACK-encoded (COMPRESSION_ERROR)
 * and for a block over one HEADERS and 8 CONTINUATION frames (INTERNAL_ERROR). Every stream on THAT
 * connection ends; another client's connection, its open stream included, goes on, and the
 * sender's channel serves again on a new connection. Nothing hangs, nothing stays wedged.
 */
import * as grpc from "@grpc/grpc-js";
import { A2AServiceClient, type StreamResponse } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { gate, scriptedAgent, sendRequest, userMessage } from "../e2e/e2e-helpers.js";

let release = gate();
let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer({
    agent: scriptedAgent(async (ctx) => {
      await ctx.working();
      await release.promise;
      await ctx.complete("done");
    }),
  });
});
afterAll(() => s.close());

function getTask(client: A2AServiceClient, md: grpc.Metadata): Promise<grpc.ServiceError | null> {
  return new Promise((resolve) =>
    client.getTask({ tenant: "", id: "no-such-task", historyLength: undefined }, md, { deadline: Date.now() + 10_000 }, (e) => resolve(e)),
  );
}

test.each([
  [
    "one header field of 100,000 bytes (over the 64 KiB HPACK field cap)",
    (md: grpc.Metadata) => md.set("x-hostile", "x".repeat(100_000)),
    /RST_STREAM with code 9/,
  ],
  [
    "six fields of 30,000 bytes (a block over 9 x 16 KiB frames)",
    (md: grpc.Metadata) => {
      for (let i = 0; i < 6; i++) md.add("x-hostile", "x".repeat(30_000));
    },
    /code 2/,
  ],
])("R-SEC-5: %s closes the sender's connection only; another client's open stream goes on, and the sender reconnects", async (_what, fill, reset) => {
  const bystander = new A2AServiceClient(s.target, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
  const sender = new A2AServiceClient(s.target, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
  release = gate(); // the agent waits on this one: the bystander's task stays WORKING until it opens
  try {
    // The bystander's stream is open (its task WORKING) while the sender misbehaves.
    const stream = bystander.sendStreamingMessage(sendRequest(userMessage("wait")), s.metadata());
    const events: StreamResponse[] = [];
    const ended = new Promise<grpc.StatusObject>((resolve) => stream.on("status", resolve));
    stream.on("data", (e: StreamResponse) => events.push(e));
    await new Promise<void>((resolve) => stream.once("data", () => resolve()));

    const hostile = s.metadata();
    fill(hostile);
    const refused = await getTask(sender, hostile);
    expect(refused?.code).toBe(grpc.status.INTERNAL);
    expect(refused?.details).toMatch(reset);

    // The sender's channel connects again and is answered by our code (TASK_NOT_FOUND).
    expect((await getTask(sender, s.metadata()))?.code).toBe(grpc.status.NOT_FOUND);
    // The bystander's stream was untouched: it gets the rest of its task and ends OK.
    release.open();
    expect((await ended).code).toBe(grpc.status.OK);
    expect(events.at(-1)?.payload?.$case).toBe("statusUpdate");
  } finally {
    bystander.close();
    sender.close();
  }
});
