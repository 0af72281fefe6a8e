/**
 * An agent that writes many updates in a tight loop never yields to the event loop (the memory
 * store answers in microtasks), so grpc-js gets no I/O turn to flush and write() turns false
 * after 16 messages even for a client that reads as fast as it can. Such a burst must not be
 * held against the client: what cannot be written yet is merged, and the client gets every
 * token, in order, in fewer responses.
 */
import * as grpc from "@grpc/grpc-js";
import { startA2AServer } from "../support/a2a-server.js";
import { controlledAgent, sendRequest, streamSend } from "./support.js";

test("R-STREAM-6, R-STREAM-5, A-32: a client that keeps up is not cut off when the agent writes 400 small updates in a tight loop, and gets every token in order", async () => {
  const ctl = controlledAgent();
  const s = await startA2AServer({ agent: ctl.agent });
  try {
    const reader = streamSend(s, sendRequest("token stream"));
    const run = await ctl.nextRun();
    await run.ctx.working();
    await reader.waitFor(2);
    for (let i = 0; i < 400; i++) await run.ctx.artifact({ artifactId: "tokens", name: String(i), parts: [`t${i} `] }, { append: i > 0 });
    await run.ctx.complete();
    run.finish();
    const end = await reader.ended;
    expect(end).toMatchObject({ code: grpc.status.OK, details: "OK" });
    const tokens = reader.events.flatMap((e) =>
      e.payload?.$case === "artifactUpdate" ? e.payload.value.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "?")) : [],
    );
    expect(tokens).toEqual(Array.from({ length: 400 }, (_, i) => `t${i} `));
    expect(reader.events.at(-1)?.payload?.$case).toBe("statusUpdate");
    expect(reader.received).toBeLessThanOrEqual(2 + 400 + 1);
  } finally {
    await s.close();
  }
});

test("A-32: the byte budget weighs the merged backlog: 1,500 appends of a 64 KiB burst's worth of text fit a 64 KiB budget once merged, the client keeps up and gets every token", async () => {
  // Each append's own response is ~110 bytes (ids, envelope) around a ~30-byte token; merged, it
  // adds its part only. Weighing every append whole (165 KB here) cut this client off.
  const ctl = controlledAgent();
  const s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_BACKLOG_BYTES: "64KiB" } });
  try {
    const reader = streamSend(s, sendRequest("token stream"));
    const run = await ctl.nextRun();
    await run.ctx.working();
    await reader.waitFor(2);
    const tokens = Array.from({ length: 1_500 }, (_, i) => `token-${String(i).padStart(6, "0")}-of-the-burst `);
    for (const [i, t] of tokens.entries()) await run.ctx.artifact({ artifactId: "tokens", name: "out", parts: [t] }, { append: i > 0 });
    await run.ctx.complete();
    run.finish();
    expect(await reader.ended).toMatchObject({ code: grpc.status.OK });
    const got = reader.events.flatMap((e) =>
      e.payload?.$case === "artifactUpdate" ? e.payload.value.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "?")) : [],
    );
    expect(got).toEqual(tokens);
  } finally {
    await s.close();
  }
});

test("A-32: a burst whose merged backlog does pass the byte budget still ends the stream RESOURCE_EXHAUSTED", async () => {
  const ctl = controlledAgent();
  const s = await startA2AServer({ agent: ctl.agent, env: { A2A_STREAM_BACKLOG_BYTES: "16KiB" } });
  try {
    const reader = streamSend(s, sendRequest("token stream"));
    const run = await ctl.nextRun();
    await run.ctx.working();
    await reader.waitFor(2);
    for (let i = 0; i < 1_500; i++)
      await run.ctx.artifact({ artifactId: "tokens", name: "out", parts: [`token-${String(i).padStart(6, "0")}-of-the-burst `] }, { append: i > 0 });
    await run.ctx.complete();
    run.finish();
    expect(await reader.ended).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
  } finally {
    await s.close();
  }
});
