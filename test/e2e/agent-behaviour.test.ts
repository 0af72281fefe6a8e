/**
 * What the service does with an agent that misbehaves or fails, seen through real gRPC calls:
 * thrown errors, no answer, unfinished tasks, events that break the rules, follow-ups that
 * arrive while the task is still running, and media types the agent does not accept.
 */
import * as grpc from "@grpc/grpc-js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import {
  Role,
  TaskState,
  dispatchAgent,
  expectA2AError,
  gate,
  rpc,
  scriptedAgent,
  sendForTask,
  sendRequest,
  taskOf,
  textOf,
  userMessage,
} from "./e2e-helpers.js";

let s: A2ATestServer;
const agents = dispatchAgent();

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent });
});
afterAll(() => s.close());

const total = async () => (await rpc(s).list()).response!.totalSize;

describe("agent failures", () => {
  test("R-ERR-7 / issue 3: a thrown agent error fails the task with a readable status message", async () => {
    const word = agents.on(async (ctx) => {
      await ctx.working("trying");
      throw new Error("the upstream API answered 503");
    });
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.status!.message!.role).toBe(Role.ROLE_AGENT);
    expect(textOf(task.status!.message)).toContain("the upstream API answered 503");
    expect((await rpc(s).get({ id: task.id })).response!.status!.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  test("issue 3: an agent that throws before any update still gives the caller a FAILED task that says why", async () => {
    const word = agents.on(async () => {
      throw new Error("could not parse the request");
    });
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status!.message)).toContain("could not parse the request");
  });

  test("R-ERR-7: an agent that returns without answering gives INTERNAL / INVALID_AGENT_RESPONSE and leaves no task", async () => {
    const before = await total();
    const word = agents.on(async () => {});
    const { error } = await rpc(s).send(sendRequest(userMessage(word)));
    expectA2AError(error, grpc.status.INTERNAL, "INVALID_AGENT_RESPONSE");
    expect(error!.details).toMatch(/neither a message nor a task/);
    expect(await total()).toBe(before);
  });

  test("issue 3: an agent that returns leaving the task WORKING gets it FAILED, with a status message", async () => {
    const word = agents.on(async (ctx) => {
      await ctx.working("half way");
    });
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status!.message)).toMatch(/stopped without finishing/);
  });
});

describe("an agent whose execute is not async", () => {
  test("issue 3: an agent that throws synchronously (a plain function, no promise) gets the caller a FAILED task that says why, and the server goes on", async () => {
    const plain = scriptedAgent((() => {
      throw new Error("thrown before any promise");
    }) as unknown as (ctx: unknown) => Promise<void>);
    const own = await startA2AServer({ agent: plain });
    try {
      const task = await sendForTask(own, userMessage("go"));
      expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(textOf(task.status!.message)).toContain("thrown before any promise");
      expect((await rpc(own).list()).response!.totalSize).toBe(1);
      // The run was forgotten: a second call is answered the same way.
      expect((await sendForTask(own, userMessage("again"))).status!.state).toBe(TaskState.TASK_STATE_FAILED);
    } finally {
      await own.close();
    }
  });
});

describe("events that break the rules are refused; the task stays consistent", () => {
  test("R-TASK-2: an update after a terminal state is refused and the task keeps its terminal status", async () => {
    const refused = gate<unknown>();
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await ctx.complete("final answer");
      await ctx.working("one more thing").then(
        () => refused.open(undefined),
        (error) => refused.open(error),
      );
      await ctx.artifact({ artifactId: "late", parts: ["too late"] }).catch(() => undefined);
    });
    const task = await sendForTask(s, userMessage(word));
    expect(await refused.promise).toBeInstanceOf(Error);
    const stored = (await rpc(s).get({ id: task.id })).response!;
    expect(stored.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(stored.status!.message)).toBe("final answer");
    expect(stored.artifacts).toEqual([]);
    expect(stored.history.map(textOf)).not.toContain("one more thing");
  });

  test("R-TASK-1: an illegal transition (INPUT_REQUIRED -> COMPLETED) is refused and the task stays INPUT_REQUIRED", async () => {
    const refused = gate<unknown>();
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await ctx.requireInput("which one?");
      await ctx.complete("skipping ahead").then(
        () => refused.open(undefined),
        (error) => refused.open(error),
      );
    });
    const task = await sendForTask(s, userMessage(word));
    expect(await refused.promise).toBeInstanceOf(Error);
    const stored = (await rpc(s).get({ id: task.id })).response!;
    expect(stored.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(stored.status!.message)).toBe("which one?");
  });

  test("R-ART-1: an artifact without parts is refused whole; the task goes on and completes without it", async () => {
    const refused = gate<unknown>();
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await ctx.artifact({ artifactId: "empty", parts: [] }).then(
        () => refused.open(undefined),
        (error) => refused.open(error),
      );
      await ctx.artifact({ artifactId: "good", parts: ["fine"] }, { lastChunk: true });
      await ctx.complete();
    });
    const task = await sendForTask(s, userMessage(word));
    expect(await refused.promise).toBeInstanceOf(Error);
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((a) => a.artifactId)).toEqual(["good"]);
    expect((await rpc(s).get({ id: task.id })).response!.artifacts.map((a) => a.artifactId)).toEqual(["good"]);
  });

  test("issue 3: a refused event is logged (warn, with the task id) even when the agent catches the error", async () => {
    const refused = gate<unknown>();
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await ctx.complete("final");
      await ctx.working("after the end").then(
        () => refused.open(undefined),
        (error) => refused.open(error),
      );
    });
    const task = await sendForTask(s, userMessage(word));
    expect(await refused.promise).toBeInstanceOf(Error);
    const logged = s.lines.filter((l) => l["task_id"] === task.id && Number(l["level"]) >= 40);
    expect(logged.map((l) => l["msg"])).not.toEqual([]);
  });

  test("issue 3: an agent that lets a refused event's error escape gets the task FAILED (not half-changed)", async () => {
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await ctx.artifact({ artifactId: "a", parts: ["kept"] }, { lastChunk: true });
      await ctx.artifact({ artifactId: "empty", parts: [] });
    });
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status!.message)).toMatch(/the agent failed/);
    expect(task.artifacts.map((a) => a.artifactId)).toEqual(["a"]);
  });
});

describe("follow-ups while the task is running", () => {
  test("R-SEND-12: a follow-up while the task is still WORKING is FAILED_PRECONDITION / UNSUPPORTED_OPERATION; the task is untouched", async () => {
    const release = gate();
    const word = agents.on(async (ctx) => {
      await ctx.working();
      await release.promise;
      await ctx.complete("done");
    });
    const running = await sendForTask(s, userMessage(word), { returnImmediately: true });
    const { error } = await rpc(s).send(sendRequest(userMessage(`${word} hurry up`, { taskId: running.id })));
    const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION");
    expect(info.metadata["task_id"]).toBe(running.id);
    release.open();
    const stored = await untilState(running.id, TaskState.TASK_STATE_COMPLETED);
    expect(stored.history.map(textOf)).not.toContain(`${word} hurry up`);
  });

  test("R-SEND-12: a second follow-up while the first follow-up is being worked on is UNSUPPORTED_OPERATION", async () => {
    const release = gate();
    const word = agents.on(async (ctx) => {
      if (ctx.task === undefined) {
        await ctx.working();
        return ctx.requireInput("tell me more");
      }
      await release.promise;
      await ctx.complete("thanks");
    });
    const opened = await sendForTask(s, userMessage(word));
    const first = rpc(s).send(sendRequest(userMessage(`${word} first`, { taskId: opened.id })));
    await untilState(opened.id, TaskState.TASK_STATE_WORKING);
    const second = await rpc(s).send(sendRequest(userMessage(`${word} second`, { taskId: opened.id })));
    expectA2AError(second.error, grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION");
    release.open();
    const done = taskOf((await first).response!);
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.history.map(textOf)).not.toContain(`${word} second`);
  });
});

describe("R-SEND-9: media types the agent does not accept", () => {
  let picky: A2ATestServer;
  beforeAll(async () => {
    picky = await startA2AServer({
      agent: scriptedAgent(async (ctx) => ctx.reply("accepted"), { acceptedInputMediaTypes: ["text/plain"] }),
    });
  });
  afterAll(() => picky.close());

  test("R-SEND-9: a part with media type image/png is INVALID_ARGUMENT / CONTENT_TYPE_NOT_SUPPORTED naming the part, and makes no task", async () => {
    const message = userMessage("look", {
      parts: [
        { content: { $case: "text", value: "look at this" }, filename: "", mediaType: "" },
        { content: { $case: "raw", value: Buffer.from([0x89, 0x50, 0x4e, 0x47]) }, filename: "a.png", mediaType: "image/png" },
      ],
    });
    const { error } = await rpc(picky).send(sendRequest(message));
    const info = expectA2AError(error, grpc.status.INVALID_ARGUMENT, "CONTENT_TYPE_NOT_SUPPORTED");
    expect(info.metadata).toMatchObject({ media_type: "image/png", field: "message.parts[1].media_type" });
    expect(error!.details).toContain("text/plain");
    expect((await rpc(picky).list()).response!.totalSize).toBe(0);
  });

  test("R-SEND-9: text parts (declared text/plain or undeclared) are accepted", async () => {
    const declared = userMessage("hi", { parts: [{ content: { $case: "text", value: "hi" }, filename: "", mediaType: "text/plain" }] });
    expect((await rpc(picky).send(sendRequest(declared))).response!.payload!.$case).toBe("message");
    expect((await rpc(picky).send(sendRequest(userMessage("plain")))).response!.payload!.$case).toBe("message");
  });
});

/** GetTask until the task is in `state` (ticks of the event loop apart). */
async function untilState(id: string, state: TaskState) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const task = (await rpc(s).get({ id })).response!;
    if (task.status!.state === state) return task;
    if (Date.now() > deadline) throw new Error(`task ${id} did not reach ${TaskState[state]} (is ${TaskState[task.status!.state]})`);
    await new Promise((r) => setImmediate(r));
  }
}
