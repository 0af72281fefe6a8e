import { describe, expect, it } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import { MessageSchema, Role, TaskSchema, TaskState, TaskStatusSchema, type Message, type Task } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { AgentContext, ArtifactInput, MessageInput } from "../../src/lifecycle/ports/agent.js";
import { canTransition, INITIAL_STATE, isSettled } from "../../src/lifecycle/model/task-state.js";
import demoAgent, { createDemoAgent, FAIL_MESSAGE, TRIP_QUESTION } from "../../src/agents/demo/demo-agent.js";
import { parseDemoCommand } from "../../src/agents/demo/demo-command.js";

type Call =
  | { kind: "reply"; text: string }
  | { kind: "artifact"; artifact: ArtifactInput; text: string; append: boolean; lastChunk: boolean }
  | { kind: "working" | "complete" | "fail" | "reject" | "requireInput" | "requireAuth"; text: string };

const STATE_OF = {
  working: TaskState.WORKING,
  complete: TaskState.COMPLETED,
  fail: TaskState.FAILED,
  reject: TaskState.REJECTED,
  requireInput: TaskState.INPUT_REQUIRED,
  requireAuth: TaskState.AUTH_REQUIRED,
} as const;

function textOf(content: MessageInput | undefined): string {
  if (content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((p) => (typeof p === "string" ? p : p.content?.case === "text" ? p.content.value : "")).join("");
}

let seq = 0;
function userMessage(text: string | undefined, extra: Partial<Pick<Message, "taskId" | "referenceTaskIds">> = {}): Message {
  const parts =
    text === undefined
      ? [{ content: { case: "url" as const, value: "https://example.invalid/file.png" }, mediaType: "image/png" }]
      : [{ content: { case: "text" as const, value: text } }];
  return create(MessageSchema, { messageId: `m-${++seq}`, contextId: "ctx-1", role: Role.USER, parts, ...extra });
}

function task(id: string, state: TaskState, history: Message[] = []): Task {
  return create(TaskSchema, { id, contextId: "ctx-1", status: create(TaskStatusSchema, { state }), history });
}

/**
 * A recording AgentContext that also plays the service's part of the contract: it checks each
 * update against the state machine, refuses reply() after a task update, and refuses updates
 * once the task is settled. `onCall` lets a test react to a call (e.g. cancel).
 */
function fakeContext(message: Message, opts: { task?: Task; referenceTasks?: Task[]; signal?: AbortSignal; onCall?: (call: Call) => void } = {}) {
  const calls: Call[] = [];
  let state: TaskState | undefined = opts.task?.status?.state;
  let settled = false;
  const record = (call: Call) => {
    calls.push(call);
    opts.onCall?.(call);
  };
  const update = (kind: keyof typeof STATE_OF) => async (content?: MessageInput) => {
    const to = STATE_OF[kind];
    const from = state ?? INITIAL_STATE;
    if (settled) throw new Error(`update after the task settled: ${kind}`);
    if (!canTransition(from, to)) throw new Error(`illegal transition ${TaskState[from]} -> ${TaskState[to]}`);
    state = to;
    settled = isSettled(to);
    record({ kind, text: textOf(content) });
  };
  const ctx: AgentContext = {
    message,
    task: opts.task,
    contextId: "ctx-1",
    referenceTasks: opts.referenceTasks ?? [],
    caller: {} as AgentContext["caller"],
    requestedExtensions: [],
    requestMetadata: undefined,
    signal: opts.signal ?? new AbortController().signal,
    activateExtension: () => {},
    get taskId() {
      return state === undefined ? undefined : (opts.task?.id ?? "t-new");
    },
    async reply(content) {
      if (state !== undefined || calls.length > 0) throw new Error("reply after a task update or a second reply");
      record({ kind: "reply", text: textOf(content) });
    },
    working: update("working"),
    async artifact(artifact, options) {
      if (state !== TaskState.WORKING) throw new Error(`artifact while ${state === undefined ? "no task" : TaskState[state]}`);
      record({ kind: "artifact", artifact, text: textOf(artifact.parts), append: options?.append ?? false, lastChunk: options?.lastChunk ?? false });
    },
    complete: update("complete"),
    fail: update("fail"),
    reject: update("reject"),
    requireInput: update("requireInput"),
    requireAuth: update("requireAuth"),
  };
  return { ctx, calls, state: () => state };
}

const fast = createDemoAgent({ stepDelayMs: 0, tickMs: 0 });
const kinds = (calls: Call[]) => calls.map((c) => c.kind);

describe("demo agent: message-only echo", () => {
  it("R-STREAM-2: 'hello' is answered with one message and no task, echoing the text and listing the keywords", async () => {
    const { ctx, calls, state } = fakeContext(userMessage("Hello there"));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["reply"]);
    expect(state()).toBeUndefined();
    expect(calls[0]!.text).toContain("Hello there");
    for (const keyword of ["story", "trip", "long", "fail", "reject", "auth"]) expect(calls[0]!.text).toContain(keyword);
  });

  it("a message without a text part gets a reply explaining what to send", async () => {
    const { ctx, calls } = fakeContext(userMessage(undefined));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["reply"]);
    expect(calls[0]!.text).toMatch(/no text part/);
  });

  it("keywords are case-insensitive whole first words", () => {
    const kw = (text: string) => parseDemoCommand(userMessage(text)).keyword;
    expect(kw("STORY please")).toBe("story");
    expect(kw("  Chunks")).toBe("story");
    expect(kw("Trip!")).toBe("trip");
    expect(kw("storytelling")).toBe("echo");
    expect(kw("tell me a story")).toBe("echo");
  });

  it("R-SEND-15: referenced tasks' ids and states are mentioned in the reply", async () => {
    const refs = [task("t-old", TaskState.COMPLETED), task("t-paused", TaskState.INPUT_REQUIRED)];
    const { ctx, calls } = fakeContext(userMessage("hello", { referenceTaskIds: ["t-old", "t-paused"] }), { referenceTasks: refs });
    await fast.execute(ctx);
    expect(calls[0]!.text).toContain("t-old (TASK_STATE_COMPLETED)");
    expect(calls[0]!.text).toContain("t-paused (TASK_STATE_INPUT_REQUIRED)");
  });
});

describe("demo agent: story", () => {
  it("R-ART-2: works, streams artifact 'story' in chunks (append after the first, last_chunk on the last), then completes", async () => {
    const { ctx, calls, state } = fakeContext(userMessage("story"));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "artifact", "artifact", "artifact", "artifact", "complete"]);
    const chunks = calls.filter((c): c is Extract<Call, { kind: "artifact" }> => c.kind === "artifact");
    expect(chunks.map((c) => c.append)).toEqual([false, true, true, true]);
    expect(chunks.map((c) => c.lastChunk)).toEqual([false, false, false, true]);
    expect(new Set(chunks.map((c) => c.artifact.artifactId))).toEqual(new Set(["story"]));
    expect(chunks.every((c) => c.artifact.name === "story")).toBe(true);
    expect(chunks.map((c) => c.text).join("")).toMatch(/^Once upon a time.*The end\.$/s);
    expect(state()).toBe(TaskState.COMPLETED);
  });

  it("R-STREAM-6: chunks are spaced by the configured delay, not sent all at the end", async () => {
    const agent = createDemoAgent({ stepDelayMs: 20 });
    const times: number[] = [];
    const { ctx } = fakeContext(userMessage("chunks"), {
      onCall: (c) => {
        if (c.kind === "artifact") times.push(performance.now());
      },
    });
    await agent.execute(ctx);
    expect(times).toHaveLength(4);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(15);
  });

  it("R-SEND-15: the story's last chunk names the referenced tasks", async () => {
    const { ctx, calls } = fakeContext(userMessage("story"), { referenceTasks: [task("t-ref", TaskState.FAILED)] });
    await fast.execute(ctx);
    const last = calls.filter((c) => c.kind === "artifact").at(-1)!;
    expect(last.text).toContain("t-ref (TASK_STATE_FAILED)");
  });
});

describe("demo agent: trip (multi-turn)", () => {
  it("R-SEND-12: 'trip' works, then pauses in INPUT_REQUIRED asking for a destination", async () => {
    const { ctx, calls, state } = fakeContext(userMessage("trip"));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "requireInput"]);
    expect(calls[1]!.text).toBe(TRIP_QUESTION);
    expect(state()).toBe(TaskState.INPUT_REQUIRED);
  });

  it("R-SEND-12: the answer on the same task produces artifact 'itinerary' naming the destination, then completes", async () => {
    const opener = userMessage("trip");
    const answer = userMessage("Lisbon", { taskId: "t-trip" });
    const paused = task("t-trip", TaskState.INPUT_REQUIRED, [opener, answer]);
    const { ctx, calls, state } = fakeContext(answer, { task: paused });
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "artifact", "complete"]);
    const artifact = calls[1] as Extract<Call, { kind: "artifact" }>;
    expect(artifact.artifact.name).toBe("itinerary");
    expect(artifact.text).toContain("Lisbon");
    expect(state()).toBe(TaskState.COMPLETED);
  });

  it("R-SEND-12: an empty answer asks again (INPUT_REQUIRED -> WORKING -> INPUT_REQUIRED)", async () => {
    const answer = userMessage("   ", { taskId: "t-trip" });
    const paused = task("t-trip", TaskState.INPUT_REQUIRED, [userMessage("trip")]);
    const { ctx, calls, state } = fakeContext(answer, { task: paused });
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "requireInput"]);
    expect(calls[1]!.text).toContain(TRIP_QUESTION);
    expect(state()).toBe(TaskState.INPUT_REQUIRED);
  });

  it("a continuation is recognised from the paused state when the history was trimmed", async () => {
    const { ctx, calls } = fakeContext(userMessage("Oslo", { taskId: "t-trip" }), { task: task("t-trip", TaskState.INPUT_REQUIRED) });
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "artifact", "complete"]);
    expect(calls[1]!.text).toContain("Oslo");
  });

  it("R-SEND-15: the itinerary names referenced tasks", async () => {
    const paused = task("t-trip", TaskState.INPUT_REQUIRED, [userMessage("trip")]);
    const { ctx, calls } = fakeContext(userMessage("Rome", { taskId: "t-trip" }), { task: paused, referenceTasks: [task("t-x", TaskState.COMPLETED)] });
    await fast.execute(ctx);
    expect(calls[1]!.text).toContain("t-x (TASK_STATE_COMPLETED)");
  });
});

describe("demo agent: long task and cancellation", () => {
  it("R-STREAM-6: 'long 3' posts a progress status per step, then an artifact, then completes", async () => {
    const { ctx, calls, state } = fakeContext(userMessage("long 3"));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "working", "working", "working", "artifact", "complete"]);
    expect(calls.slice(1, 4).map((c) => c.text)).toEqual(["step 1/3", "step 2/3", "step 3/3"]);
    expect(state()).toBe(TaskState.COMPLETED);
  });

  it("the duration defaults to 60 seconds and is capped at 600", () => {
    expect(parseDemoCommand(userMessage("long")).seconds).toBe(60);
    expect(parseDemoCommand(userMessage("long soon")).seconds).toBe(60);
    expect(parseDemoCommand(userMessage("LONG 30")).seconds).toBe(30);
    expect(parseDemoCommand(userMessage("long 9999")).seconds).toBe(600);
    expect(parseDemoCommand(userMessage("long 0")).seconds).toBe(1);
  });

  it("R-CANCEL-5: aborting the signal at step 3 stops the task with no further updates", async () => {
    const controller = new AbortController();
    const { ctx, calls, state } = fakeContext(userMessage("long 60"), {
      signal: controller.signal,
      onCall: (c) => {
        if (c.text === "step 3/60") controller.abort();
      },
    });
    await fast.execute(ctx);
    expect(calls.at(-1)!.text).toBe("step 3/60");
    expect(calls).toHaveLength(4);
    expect(state()).toBe(TaskState.WORKING); // the service, not the agent, writes CANCELED
  });

  it("R-CANCEL-5: a cancel during a one-second wait ends the task promptly", async () => {
    const agent = createDemoAgent({ tickMs: 60_000 });
    const controller = new AbortController();
    const { ctx, calls } = fakeContext(userMessage("long"), {
      signal: controller.signal,
      onCall: (c) => {
        if (c.kind === "working") queueMicrotask(() => controller.abort());
      },
    });
    const started = performance.now();
    await agent.execute(ctx);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(kinds(calls)).toEqual(["working"]);
  });

  it("an update refused because the task was canceled meanwhile is not reported as an error", async () => {
    const controller = new AbortController();
    const { ctx } = fakeContext(userMessage("long 5"));
    const racing: AgentContext = Object.create(ctx, {
      signal: { value: controller.signal },
      working: {
        value: async (m?: MessageInput) => {
          if (textOf(m) === "step 2/5") {
            controller.abort();
            throw new Error("task is already canceled");
          }
          return ctx.working(m);
        },
      },
    });
    await expect(fast.execute(racing)).resolves.toBeUndefined();
  });
});

describe("demo agent: fail, reject, auth", () => {
  it("'fail' works, then throws a readable error for the service to turn into FAILED", async () => {
    const { ctx, calls } = fakeContext(userMessage("fail"));
    await expect(fast.execute(ctx)).rejects.toThrow(FAIL_MESSAGE);
    expect(kinds(calls)).toEqual(["working"]);
  });

  it("'reject' rejects right away (SUBMITTED -> REJECTED) with a reason", async () => {
    const { ctx, calls, state } = fakeContext(userMessage("Reject this"));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["reject"]);
    expect(calls[0]!.text).toMatch(/rejects/);
    expect(state()).toBe(TaskState.REJECTED);
  });

  it("R-IAUTH-1: 'auth' moves to AUTH_REQUIRED with a status message naming the out-of-band credential", async () => {
    const { ctx, calls, state } = fakeContext(userMessage("auth"));
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "requireAuth"]);
    expect(calls[1]!.text).toMatch(/OAuth 2\.0 access token/);
    expect(calls[1]!.text).toMatch(/out of band/);
    expect(state()).toBe(TaskState.AUTH_REQUIRED);
  });

  it("R-IAUTH-4: a follow-up message on the AUTH_REQUIRED task completes it", async () => {
    const paused = task("t-auth", TaskState.AUTH_REQUIRED, [userMessage("auth")]);
    const { ctx, calls, state } = fakeContext(userMessage("done", { taskId: "t-auth" }), { task: paused });
    await fast.execute(ctx);
    expect(kinds(calls)).toEqual(["working", "complete"]);
    expect(state()).toBe(TaskState.COMPLETED);
  });
});

describe("demo agent: card", () => {
  it("R-CARD-3: one skill per behaviour, each with id, name, description, tags and examples", () => {
    const skills = demoAgent.card?.skills ?? [];
    expect(skills.map((s) => s.id)).toEqual(["echo", "story", "trip", "long", "fail", "reject", "auth"]);
    for (const s of skills) {
      expect(s.name && s.description).toBeTruthy();
      expect(s.tags.length).toBeGreaterThan(0);
      expect(s.examples.length).toBeGreaterThan(0);
    }
    expect(demoAgent.card?.name && demoAgent.card?.description && demoAgent.card?.version).toBeTruthy();
    expect(demoAgent.card?.defaultInputModes).toEqual(["text/plain"]);
  });

  it("each skill's first example, sent as a message, triggers that skill", () => {
    for (const s of demoAgent.card?.skills ?? []) {
      expect(parseDemoCommand(userMessage(s.examples[0]!)).keyword).toBe(s.id);
    }
  });
});
