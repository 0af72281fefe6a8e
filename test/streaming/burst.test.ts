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
