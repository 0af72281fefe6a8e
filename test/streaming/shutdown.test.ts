/**
 * Shutdown (issue 4 item 8): open A2A streams — a task stream, a subscriber, and a stream still
 * waiting for the agent's first answer — end with UNAVAILABLE and a clear message when the server
 * shuts down gracefully, without waiting out the grace period.
 */
import * as grpc from "@grpc/grpc-js";
import { startA2AServer } from "../support/a2a-server.js";
import { controlledAgent, sendRequest, streamSend, subscribe, taskIdOf } from "./support.js";

test("issue 4 item 8: server.shutdown(grace) ends every open A2A stream with UNAVAILABLE 'server is shutting down' and frees their listeners", async () => {
  const ctl = controlledAgent();
  const s = await startA2AServer({ agent: ctl.agent });
  try {
    const taskStream = streamSend(s, sendRequest("long job"));
    const run = await ctl.nextRun();
    await run.ctx.working();
    await taskStream.waitFor(2);
    const taskId = taskIdOf(taskStream);
    const subscriber = subscribe(s, taskId);
    await subscriber.waitFor(1);
    const thinking = streamSend(s, sendRequest("still thinking"));
    const pendingRun = await ctl.nextRun();
    expect(s.app.hub.listenerCount(taskId)).toBe(2);

    const started = Date.now();
    const stopping = s.server.shutdown(10_000);
    const ends = await Promise.all([taskStream.ended, subscriber.ended, thinking.ended]);
    for (const end of ends) {
      expect(end.code).toBe(grpc.status.UNAVAILABLE);
      expect(end.details).toBe("server is shutting down");
    }
    expect(s.app.hub.listenerCount()).toBe(0);
    await stopping;
    expect(Date.now() - started).toBeLessThan(5_000); // open streams did not hold the shutdown for the whole grace period
    expect(run.ctx.signal.aborted).toBe(true); // then the agents were told to stop
    expect(pendingRun.ctx.signal.aborted).toBe(true);
    run.finish();
    pendingRun.finish();
    expect(taskStream.events.map((e) => e.payload?.$case)).toEqual(["task", "statusUpdate"]);
  } finally {
    await s.close();
  }
});
