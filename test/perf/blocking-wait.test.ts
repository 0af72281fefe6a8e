import { create } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { EventHub } from "../../src/events/event-hub.js";
import type { Agent } from "../../src/lifecycle/ports/agent.js";
import { silentLogger } from "../../src/lifecycle/ports/logger.js";
import { PageTokenCodec } from "../../src/lifecycle/reads/page-token.js";
import { TaskService, type RequestContext } from "../../src/lifecycle/task-service.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";

/*
 * A blocking SendMessage stops waiting when its client goes away, told either by the
 * request's AbortSignal or by its cheaper onGone hook; the task goes on.
 */

function setup() {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const agent: Agent = {
    async execute(ctx) {
      await ctx.working();
      await finished;
      await ctx.complete();
    },
  };
  const repository = new MemoryTaskRepository();
  const service = new TaskService({ repository, hub: new EventHub(), agent, pageTokens: new PageTokenCodec(Buffer.alloc(32, 7)), logger: silentLogger });
  const request = create(SendMessageRequestSchema, {
    message: create(MessageSchema, { messageId: "m", role: Role.USER, parts: [{ content: { case: "text", value: "hi" } }] }),
  });
  return { service, request, finish, repository };
}

const caller = { tenant: "", principal: "anonymous" };

describe("blocking wait and the client going away", () => {
  it("R-SEND: onGone ends the wait with the task as it is; the listener is removed once the wait is over", async () => {
    const { service, request, finish } = setup();
    const listeners = new Set<(reason: unknown) => void>();
    const rc: RequestContext = {
      caller,
      requestedExtensions: [],
      activatedExtensions: new Set(),
      onGone: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const reply = service.sendMessage(rc, request);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(listeners.size).toBe(1);
    for (const listener of [...listeners]) listener(new Error("gone"));
    const response = await reply;
    expect(response.payload.case === "task" && response.payload.value.status?.state).toBe(TaskState.WORKING);
    expect(listeners.size).toBe(0);
    finish();
  });

  it("R-SEND: without onGone, the AbortSignal does the same", async () => {
    const { service, request, finish } = setup();
    const controller = new AbortController();
    const rc: RequestContext = { caller, requestedExtensions: [], activatedExtensions: new Set(), signal: controller.signal };
    const reply = service.sendMessage(rc, request);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error("gone"));
    const response = await reply;
    expect(response.payload.case === "task" && response.payload.value.status?.state).toBe(TaskState.WORKING);
    finish();
  });

  it("a wait that ends because the task settled removes its onGone listener", async () => {
    const { service, request, finish } = setup();
    const listeners = new Set<(reason: unknown) => void>();
    const rc: RequestContext = {
      caller,
      requestedExtensions: [],
      activatedExtensions: new Set(),
      onGone: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const reply = service.sendMessage(rc, request);
    await new Promise((resolve) => setTimeout(resolve, 20));
    finish();
    const response = await reply;
    expect(response.payload.case === "task" && response.payload.value.status?.state).toBe(TaskState.COMPLETED);
    expect(listeners.size).toBe(0);
  });
});
