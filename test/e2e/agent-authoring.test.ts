/**
 * Issue 14: what an agent author reaches for, seen through the independent ts-proto client on a
 * real server. Data parts from plain JSON, tasks that settle at once, refusing a
 * call with an A2A error before a task exists, and the part builders. Everything the agents use
 * comes from the package entry (src/index.ts), as an agent module imports it.
 */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  ContentTypeNotSupportedError,
  InvalidParamsError,
  TaskNotFoundError,
  UnsupportedOperationError,
  dataPart,
  filePart,
  textPart,
} from "../../src/index.js";
import type { AgentContext } from "../../src/index.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { StreamReader } from "../streaming/support.js";
import { TaskState, dispatchAgent, expectA2AError, gate, messageOf, rpc, sendForTask, sendRequest, statusDetails, textOf, userMessage } from "./e2e-helpers.js";

let s: A2ATestServer;
const agents = dispatchAgent();

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent });
});
afterAll(() => s.close());

const total = async () => (await rpc(s).list()).response!.totalSize;
const stream = (text: string) => new StreamReader(s.client.sendStreamingMessage(sendRequest(userMessage(text)), s.metadata()));

/** Runs `use` as the agent's first step and hands back how it settled (the agent then answers plainly). */
async function attempt(use: (ctx: AgentContext) => Promise<void>, then: (ctx: AgentContext) => Promise<void>) {
  const outcome = gate<unknown>();
  const word = agents.on(async (ctx) => {
    await use(ctx).then(
      () => outcome.open("accepted"),
      (error: unknown) => outcome.open(error),
    );
    await then(ctx);
  });
  return { word, outcome: outcome.promise };
}

const JSON_KINDS: Array<[string, unknown]> = [
  ["an object", { key: "value", count: 42 }],
  ["an array", ["a", 1, true, null]],
  ["a string", "just text"],
  ["a number", 3.25],
  ["a boolean", false],
  ["null", null],
  [
    "nested objects and arrays",
    {
      order: {
        id: "o-1",
        lines: [
          { sku: "x", qty: 2, tags: [] },
          { sku: "y", qty: 1, note: null },
        ],
      },
      ok: true,
    },
  ],
];

describe("A-27: data parts from plain JSON arrive intact (ts-proto client)", () => {
  test.each(JSON_KINDS)("A-27: %s in a reply, a status message and an artifact", async (_kind, json) => {
    const reply = agents.on(async (ctx) => ctx.reply([dataPart(json as never)]));
    const answer = messageOf((await rpc(s).send(sendRequest(userMessage(reply)))).response!);
    expect(answer.parts[0]!.content).toEqual({ $case: "data", value: json });

    const task = agents.on(async (ctx) => {
      await ctx.artifact({ name: "result", parts: [dataPart(json as never)] });
      await ctx.complete(["here it is", { content: { case: "data", value: json as never } }]); // the raw shape the README used to show works too
    });
    const done = await sendForTask(s, userMessage(task));
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]!.parts[0]!.content).toEqual({ $case: "data", value: json });
    expect(done.status!.message!.parts.map((p) => p.content)).toEqual([
      { $case: "text", value: "here it is" },
      { $case: "data", value: json },
    ]);
  });

  test("A-27: the incoming message's own parts (data included) can be sent back as they are", async () => {
    const word = agents.on(async (ctx) => ctx.reply(ctx.message.parts));
    const parts = [
      { content: { $case: "text" as const, value: word }, filename: "", mediaType: "" },
      { content: { $case: "data" as const, value: { nested: [1, { two: null }] } }, filename: "d.json", mediaType: "application/json" },
      { content: { $case: "raw" as const, value: Buffer.from([7, 8]) }, filename: "b.bin", mediaType: "" },
    ];
    const answer = messageOf((await rpc(s).send(sendRequest(userMessage(word, { parts })))).response!);
    expect(answer.parts.map((p) => [p.content?.$case, p.filename, p.mediaType])).toEqual([
      ["text", "", ""],
      ["data", "d.json", "application/json"],
      ["raw", "b.bin", ""],
    ]);
    expect(answer.parts[1]!.content!.value).toEqual({ nested: [1, { two: null }] });
    expect(Buffer.from(answer.parts[2]!.content!.value as Uint8Array)).toEqual(Buffer.from([7, 8]));
  });

  test("A-27: a google.protobuf.Value made with protobuf-es is sent as it is", async () => {
    const word = agents.on(async (ctx) => ctx.reply([{ content: { case: "data", value: create(ValueSchema, { kind: { case: "numberValue", value: 7 } }) } }]));
    const answer = messageOf((await rpc(s).send(sendRequest(userMessage(word)))).response!);
    expect(answer.parts[0]!.content).toEqual({ $case: "data", value: 7 });
  });

  const UNREPRESENTABLE: Array<[string, unknown, string]> = [
    ["a function", { run: () => 1 }, "parts[1].data.run"],
    ["a BigInt", { big: 2n ** 70n }, "parts[1].data.big"],
    [
      "a cycle",
      (() => {
        const o: Record<string, unknown> = {};
        o["me"] = o;
        return o;
      })(),
      "parts[1].data.me",
    ],
    ["NaN", [1, NaN], "parts[1].data[1]"],
    ["Infinity", { x: Infinity }, "parts[1].data.x"],
    ["undefined in an array", [undefined], "parts[1].data[0]"],
    ["a symbol", { s: Symbol("x") }, "parts[1].data.s"],
    ["a Date", new Date(), "parts[1].data"],
  ];
  test.each(UNREPRESENTABLE)("A-27: %s in a status message is refused to the agent, naming the part; the task goes on", async (_kind, bad, path) => {
    const { word, outcome } = await attempt(
      (ctx) => ctx.complete(["fine", dataPart(bad as never)]),
      (ctx) => ctx.complete("completed without the bad part"),
    );
    const task = await sendForTask(s, userMessage(word));
    const error = (await outcome) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toContain(`complete() message parts[1]`);
    expect(error.message).toContain(path);
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status!.message)).toBe("completed without the bad part");
    // The refusal came before anything was written: no message with an empty data part anywhere.
    expect(task.history.flatMap((m) => m.parts).filter((p) => p.content?.$case === "data")).toEqual([]);
  });

  test("A-27: a bad value in a reply, an artifact or metadata is refused the same way; a refused first update makes no task", async () => {
    const before = await total();
    const { word, outcome } = await attempt(
      (ctx) => ctx.reply([dataPart({ f: () => 0 } as never)]),
      (ctx) => ctx.reply("plain answer"),
    );
    const answer = messageOf((await rpc(s).send(sendRequest(userMessage(word)))).response!);
    expect(textOf(answer)).toBe("plain answer");
    expect(((await outcome) as Error).message).toMatch(/^reply\(\) parts\[0\]\.data\.f: a function cannot be sent as JSON/);

    const art = await attempt(
      (ctx) => ctx.artifact({ parts: ["ok", "ok", dataPart([1n] as never)] }),
      (ctx) => ctx.reply("no task either"),
    );
    await rpc(s).send(sendRequest(userMessage(art.word)));
    expect(((await art.outcome) as Error).message).toMatch(/^artifact\(\) parts\[2\]\.data\[0\]: a BigInt/);

    const meta = await attempt(
      (ctx) => ctx.artifact({ parts: [textPart("x", { metadata: { when: new Date() } as never })] }),
      (ctx) => ctx.reply("still no task"),
    );
    await rpc(s).send(sendRequest(userMessage(meta.word)));
    expect(((await meta.outcome) as Error).message).toMatch(/^artifact\(\) parts\[0\]\.metadata\.when: a Date is not a plain JSON object/);
    expect(await total()).toBe(before); // the refused first updates made no task

    const logged = s.lines.filter((l) => l["msg"] === "refused an agent event that cannot be sent");
    expect(logged.length).toBeGreaterThanOrEqual(2);
  });

  test("A-27: a part without content is refused, naming it and the builders to use", async () => {
    const { word, outcome } = await attempt(
      (ctx) => ctx.complete(["a", {} as never]),
      (ctx) => ctx.complete(),
    );
    await sendForTask(s, userMessage(word));
    expect(((await outcome) as Error).message).toMatch(/^complete\(\) message parts\[1\]: content must be .*textPart\(\), dataPart\(\) or filePart\(\)/);
  });
});

describe("issue 14: part builders", () => {
  test("textPart, dataPart and filePart (bytes and URL) arrive with filename, media type and metadata", async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const word = agents.on(async (ctx) => {
      await ctx.artifact({
        name: "files",
        parts: [
          textPart("# Title", { mediaType: "text/markdown" }),
          dataPart({ rows: 2 }, { mediaType: "application/json", metadata: { schema: "v1" } }),
          filePart({ bytes, filename: "blob.bin", mediaType: "application/octet-stream" }),
          filePart({ bytes: Buffer.from("hi"), filename: "hi.txt" }),
          filePart({ url: "https://example.com/report.pdf", filename: "report.pdf", mediaType: "application/pdf" }),
        ],
      });
      await ctx.complete();
    });
    const task = await sendForTask(s, userMessage(word));
    const parts = task.artifacts[0]!.parts;
    expect(parts.map((p) => [p.content?.$case, p.filename, p.mediaType])).toEqual([
      ["text", "", "text/markdown"],
      ["data", "", "application/json"],
      ["raw", "blob.bin", "application/octet-stream"],
      ["raw", "hi.txt", ""],
      ["url", "report.pdf", "application/pdf"],
    ]);
    expect(parts[1]!.metadata).toEqual({ schema: "v1" });
    expect(Buffer.from(parts[2]!.content!.value as Uint8Array)).toEqual(Buffer.from(bytes));
    expect(Buffer.from(parts[3]!.content!.value as Uint8Array).toString()).toBe("hi");
    expect(parts[4]!.content!.value).toBe("https://example.com/report.pdf");
  });

  test("filePart needs exactly one of bytes and url", () => {
    expect(() => filePart({} as never)).toThrow(/either bytes or url/);
    expect(() => filePart({ bytes: new Uint8Array(), url: "https://x" } as never)).toThrow(/either bytes or url/);
  });
});

describe("A-26: a task that settles at once", () => {
  test.each([
    ["complete", TaskState.TASK_STATE_COMPLETED, (ctx: AgentContext) => ctx.complete("42")],
    ["requireInput", TaskState.TASK_STATE_INPUT_REQUIRED, (ctx: AgentContext) => ctx.requireInput("which city?")],
    ["requireAuth", TaskState.TASK_STATE_AUTH_REQUIRED, (ctx: AgentContext) => ctx.requireAuth("sign in first")],
    ["reject", TaskState.TASK_STATE_REJECTED, (ctx: AgentContext) => ctx.reject("no")],
  ])("A-26: ctx.%s() as the first update: SUBMITTED -> that state, answered blocking", async (_name, state, settle) => {
    const word = agents.on(settle);
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(state);
    expect(task.history.map((m) => m.role)).toEqual([1, 2]); // the user's message, then the agent's
    expect((await rpc(s).get({ id: task.id })).response!.status!.state).toBe(state);
  });

  test("A-26: SUBMITTED -> INPUT_REQUIRED, then a follow-up continues the task", async () => {
    const word = agents.on(async (ctx) => (ctx.task ? ctx.complete(`to ${textOf(ctx.message as never)}`) : ctx.requireInput("where to?")));
    const first = await sendForTask(s, userMessage(word));
    expect(first.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = await sendForTask(s, userMessage(word, { taskId: first.id }));
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test.each([
    ["complete", TaskState.TASK_STATE_COMPLETED, (ctx: AgentContext) => ctx.complete("42")],
    ["requireInput", TaskState.TASK_STATE_INPUT_REQUIRED, (ctx: AgentContext) => ctx.requireInput("which city?")],
  ])(
    "A-26, A-2: a stream of ctx.%s() as the first update carries the task (SUBMITTED), then the settling status, then ends OK",
    async (_name, state, settle) => {
      const reader = stream(agents.on(settle));
      const end = await reader.ended;
      expect(end.code).toBe(grpc.status.OK);
      expect(reader.cases()).toEqual(["task", "statusUpdate"]);
      const states = reader.events.map((e) => (e.payload?.$case === "task" || e.payload?.$case === "statusUpdate" ? e.payload.value.status?.state : undefined));
      expect(states).toEqual([TaskState.TASK_STATE_SUBMITTED, state]);
    },
  );
});

describe("issue 14: an agent refuses a call with an A2A error before a task exists", () => {
  test("InvalidParamsError: INVALID_ARGUMENT with ErrorInfo INVALID_PARAMS and a BadRequest on the field; no task", async () => {
    const before = await total();
    const word = agents.on(async () => {
      throw new InvalidParamsError("send a number of seconds between 1 and 600", { field: "message.parts[0].text" });
    });
    const { error } = await rpc(s).send(sendRequest(userMessage(word)));
    const info = expectA2AError(error, grpc.status.INVALID_ARGUMENT, "INVALID_PARAMS");
    expect(info.metadata).toEqual({ field: "message.parts[0].text" });
    expect(error!.details).toBe("send a number of seconds between 1 and 600");
    expect(statusDetails(error!).badRequest!.fieldViolations).toEqual([
      { field: "message.parts[0].text", description: "send a number of seconds between 1 and 600", reason: "", localizedMessage: undefined },
    ]);
    expect(await total()).toBe(before);
    expect(s.lines.some((l) => l["msg"] === "the agent failed" && String((l["err"] as { message?: string })?.message).includes("between 1 and 600"))).toBe(
      false,
    );
  });

  test.each([
    ["UnsupportedOperationError", () => new UnsupportedOperationError("this agent only summarizes"), grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION"],
    [
      "ContentTypeNotSupportedError",
      () => new ContentTypeNotSupportedError("image/png", "message.parts[0].media_type", ["text/plain"]),
      grpc.status.INVALID_ARGUMENT,
      "CONTENT_TYPE_NOT_SUPPORTED",
    ],
    ["TaskNotFoundError", () => new TaskNotFoundError("t-elsewhere"), grpc.status.NOT_FOUND, "TASK_NOT_FOUND"],
  ])("%s thrown before any answer: the client gets its status and ErrorInfo, not a FAILED task", async (_name, make, code, reason) => {
    const before = await total();
    const word = agents.on(async () => {
      await Promise.resolve(); // after an await, too
      throw make();
    });
    const { error } = await rpc(s).send(sendRequest(userMessage(word)));
    expectA2AError(error, code, reason);
    expect(await total()).toBe(before);
  });

  test("a refusal on a stream ends it with the status and no event", async () => {
    const word = agents.on(async () => {
      throw new InvalidParamsError("nothing to work on");
    });
    const reader = stream(word);
    const end = await reader.ended;
    expect({ code: end.code, reason: end.reason, events: reader.received }).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      reason: "INVALID_PARAMS",
      events: 0,
    });
  });

  test("once the task exists the rule stays: the thrown A2A error fails the task", async () => {
    const word = agents.on(async (ctx) => {
      await ctx.working();
      throw new InvalidParamsError("too late to refuse");
    });
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status!.message)).toBe("the agent failed: too late to refuse");
  });

  test("a follow-up's task exists already: a thrown A2A error fails it", async () => {
    const word = agents.on(async (ctx) => {
      if (!ctx.task) return ctx.requireInput("and?");
      throw new UnsupportedOperationError("not that");
    });
    const first = await sendForTask(s, userMessage(word));
    const after = await sendForTask(s, userMessage(word, { taskId: first.id }));
    expect(after.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(after.status!.message)).toBe("the agent failed: not that");
  });

  test("an ordinary error before any answer keeps today's rule: a FAILED task", async () => {
    const word = agents.on(async () => {
      throw new Error("plain bug");
    });
    const task = await sendForTask(s, userMessage(word));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(textOf(task.status!.message)).toBe("the agent failed: plain bug");
  });
});
