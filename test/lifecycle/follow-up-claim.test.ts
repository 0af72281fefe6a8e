import { create } from "@bufbuild/protobuf";
import { MessageSchema, Role, SendMessageRequestSchema, type Task, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { EventHub } from "../../src/events/event-hub.js";
import type { Agent, AgentContext } from "../../src/lifecycle/ports/agent.js";
import { silentLogger } from "../../src/lifecycle/ports/logger.js";
import { PageTokenCodec } from "../../src/lifecycle/reads/page-token.js";
import type { RunLeases } from "../../src/lifecycle/ports/run-leases.js";
import { UnsupportedOperationError } from "../../src/lifecycle/model/errors.js";
import { type RequestContext, TaskService } from "../../src/lifecycle/task-service.js";
import { MemoryTaskRepository } from "../../src/storage/memory/memory-task-repository.js";
import { historyChange, scopeOf, statusChange } from "../support/tasks.js";

/*
 * With replicas, a follow-up reads its task, then claims it. Another replica may run a whole turn
 * in between (claim, its follow-up, its agent, INPUT_REQUIRED again). The leases here stand in for
 * that other replica (outside the system under test): their claim writes that turn to the shared
 * store first, then grants the claim, as the lease row would once the other replica released it.
 */

const scope = scopeOf("", "claim-test");
const rc = (): RequestContext => ({ caller: scope, requestedExtensions: [], activatedExtensions: new Set() });
const send = (text: string, taskId = "") =>
  create(SendMessageRequestSchema, {
    message: create(MessageSchema, { messageId: `m-${text}`, role: Role.USER, taskId, parts: [{ content: { case: "text", value: text } }] }),
  });

function serviceWithOtherReplica(otherTurn: (taskId: string) => Promise<void>) {
  const repository = new MemoryTaskRepository();
  const seen: Array<Task | undefined> = [];
  const agent: Agent = {
    async execute(ctx: AgentContext) {
      seen.push(ctx.task);
      await ctx.requireInput("more?");
    },
  };
  let claims = 0;
  const leases: RunLeases = {
    hold: () => {},
    release: () => {},
    async claim(_scope, taskId) {
      claims++;
      await otherTurn(taskId);
      return true;
    },
    orphans: async () => [],
  };
  const service = new TaskService({
    repository,
    hub: new EventHub(),
    agent,
    pageTokens: new PageTokenCodec(Buffer.alloc(32, 3)),
    logger: silentLogger,
    leases,
  });
  return { repository, service, seen, claims: () => claims };
}

/** The first run's bookkeeping ends after its reply. */
async function ended(service: TaskService): Promise<void> {
  while (service.runningCount > 0) await new Promise((resolve) => setImmediate(resolve));
}

describe("a follow-up claimed on one replica after another replica's turn", () => {
  it("R-SEND-10: the agent gets the task as it is after the claim, with the other replica's turn in its history", async () => {
    let repository!: MemoryTaskRepository;
    const ctx = serviceWithOtherReplica(async (taskId) => {
      const stored = (await repository.get(scope, taskId))!;
      let version = await repository.update(scope, taskId, stored.version, historyChange("from the other replica"));
      version = await repository.update(scope, taskId, version, statusChange(TaskState.WORKING, Date.now() * 1000));
      await repository.update(scope, taskId, version, statusChange(TaskState.INPUT_REQUIRED, Date.now() * 1000 + 1, "and more?"));
    });
    repository = ctx.repository;
    const first = await ctx.service.sendMessage(rc(), send("first"));
    const task = first.payload.value as Task;
    expect(task.status?.state).toBe(TaskState.INPUT_REQUIRED);
    await ended(ctx.service);

    const followUp = await ctx.service.sendMessage(rc(), send("second", task.id));
    expect(ctx.claims()).toBe(1);
    expect((followUp.payload.value as Task).status?.state).toBe(TaskState.INPUT_REQUIRED);
    const given = ctx.seen[1];
    const texts = given?.history.map((m) => (m.parts[0]?.content.case === "text" ? m.parts[0].content.value : "")) ?? [];
    expect(texts).toContain("from the other replica");
    expect(texts.at(-1)).toBe("second");
    const stored = await repository.get(scope, task.id);
    const storedTexts = stored!.task.history.map((m) => (m.parts[0]?.content.case === "text" ? m.parts[0].content.value : ""));
    expect(storedTexts.indexOf("from the other replica")).toBeLessThan(storedTexts.indexOf("second"));
  });

  it("R-TASK-2: a task the other replica's turn ended is refused, not written to", async () => {
    let repository!: MemoryTaskRepository;
    const ctx = serviceWithOtherReplica(async (taskId) => {
      const stored = (await repository.get(scope, taskId))!;
      await repository.update(scope, taskId, stored.version, statusChange(TaskState.CANCELED, Date.now() * 1000));
    });
    repository = ctx.repository;
    const task = (await ctx.service.sendMessage(rc(), send("first"))).payload.value as Task;
    await ended(ctx.service);
    const before = (await repository.get(scope, task.id))!;
    const refusal = ctx.service.sendMessage(rc(), send("second", task.id));
    await expect(refusal).rejects.toBeInstanceOf(UnsupportedOperationError);
    await expect(refusal).rejects.toThrow(/is TASK_STATE_CANCELED: a finished task never changes/);
    const after = (await repository.get(scope, task.id))!;
    expect(after.task.status?.state).toBe(TaskState.CANCELED);
    expect(after.version).toBe(before.version + 1); // only the cancel: the follow-up wrote nothing
    expect(ctx.seen).toHaveLength(1);
  });
});
