/**
 * Issue 14: each agent in examples/ loaded by the server's own loader (as A2A_AGENT_MODULE would)
 * behind a real server, and exercised through the independent ts-proto client; the multi-turn
 * one through the official @a2a-js/sdk client as well.
 */
import * as grpc from "@grpc/grpc-js";
import { fileURLToPath } from "node:url";
import { ClientFactory } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import type { Task as SdkTask } from "@a2a-js/sdk";
import { loadAgent } from "../../src/agents/agent-loader.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { StreamReader } from "../streaming/support.js";
import { TaskState, expectA2AError, rpc, sendForTask, sendRequest, statusDetails, textOf, userMessage } from "../e2e/e2e-helpers.js";
import { closeTransport, sendRequest as sdkRequest } from "../interop/sdk-client.js";

const example = (name: string) => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));

async function serve(name: string, env: Record<string, string> = {}): Promise<A2ATestServer> {
  return startA2AServer({ agent: await loadAgent(example(name)), env, advertiseBoundAddress: true });
}

describe("examples/chunked-report.mjs", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    process.env["REPORT_PAUSE_MS"] = "5";
    s = await serve("chunked-report.mjs");
  });
  afterAll(async () => {
    delete process.env["REPORT_PAUSE_MS"];
    await s.close();
  });

  test("R-STREAM-3, R-ART-2: a stream carries the task, WORKING, the chunks in order (append, lastChunk), then COMPLETED", async () => {
    const reader = new StreamReader(s.client.sendStreamingMessage(sendRequest(userMessage("report 4")), s.metadata()));
    expect((await reader.ended).code).toBe(grpc.status.OK);
    expect(reader.cases()).toEqual([
      "task",
      "statusUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate",
    ]);
    const chunks = reader.events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value] : []));
    expect(chunks.map((c) => [c.append, c.lastChunk])).toEqual([
      [false, false],
      [true, false],
      [true, false],
      [true, false],
      [true, true],
    ]);
    expect(chunks.slice(0, 4).map((c) => textOf({ parts: c.artifact!.parts } as never))).toEqual([
      "line 1 of 4\n",
      "line 2 of 4\n",
      "line 3 of 4\n",
      "line 4 of 4\n",
    ]);
    expect(chunks[4]!.artifact!.parts[0]!.content).toEqual({ $case: "data", value: { lines: 4, finishedAt: expect.any(String) } });
    const last = reader.events.at(-1)!.payload;
    expect(last?.$case === "statusUpdate" && last.value.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("the stored task holds the whole artifact, chunks joined", async () => {
    const task = await sendForTask(s, userMessage("report 2"));
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]!.parts.map((p) => p.content?.$case)).toEqual(["text", "text", "data"]);
  });
});

describe("examples/pizza-order.mjs", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await serve("pizza-order.mjs", { A2A_CARD_LISTEN: "127.0.0.1:0" });
  });
  afterAll(() => s.close());

  test("A-26, R-SEND-10: asks with INPUT_REQUIRED at once, then again, then completes with the order as data", async () => {
    const first = await sendForTask(s, userMessage("I'd like a pizza"));
    expect(first.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(first.history.map((m) => m.role)).toEqual([1, 2]); // straight from SUBMITTED: no WORKING status message
    expect(textOf(first.status!.message)).toMatch(/^What size/);
    const second = await sendForTask(s, userMessage("large please", { taskId: first.id }));
    expect(second.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(second.status!.message)).toMatch(/^A large pizza\. Which toppings\?/);
    const done = await sendForTask(s, userMessage("mushrooms and olives", { taskId: first.id }));
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(done.status!.message)).toBe("Ordered: a large pizza with mushrooms and olives.");
    expect(done.artifacts[0]!.parts[0]!.content).toEqual({ $case: "data", value: { size: "large", toppings: ["mushrooms", "olives"] } });
  });

  test("everything in one message: COMPLETED in one turn", async () => {
    const task = await sendForTask(s, userMessage("small with ham and basil"));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("the same conversation through the SDK client", async () => {
    const sdk = await new ClientFactory({ transports: [new GrpcTransportFactory()] }).createFromUrl(`http://127.0.0.1:${s.app.cardPort}`);
    try {
      const first = (await sdk.sendMessage(sdkRequest("cheese"))) as SdkTask;
      expect(first.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const done = (await sdk.sendMessage(sdkRequest("medium", { taskId: first.id, contextId: first.contextId }))) as SdkTask;
      expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(done.artifacts[0]!.parts[0]!.content).toEqual({ $case: "data", value: { size: "medium", toppings: ["cheese"] } });
    } finally {
      closeTransport(sdk.transport);
    }
  });
});

describe("examples/strict-calculator.mjs", () => {
  let s: A2ATestServer;
  beforeAll(async () => {
    s = await serve("strict-calculator.mjs");
  });
  afterAll(() => s.close());
  const total = async () => (await rpc(s).list()).response!.totalSize;

  test("A-26: a valid sum is a task COMPLETED at once, with the sum as text and data", async () => {
    const task = await sendForTask(s, userMessage("sum 1 2 3.5"));
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.status!.message!.parts.map((p) => p.content)).toEqual([
      { $case: "text", value: "1 + 2 + 3.5 = 6.5" },
      { $case: "data", value: { numbers: [1, 2, 3.5], sum: 6.5 } },
    ]);
  });

  test("A-27: numbers sent as a data part are read as JSON", async () => {
    const message = userMessage("sum", {
      parts: [
        { content: { $case: "text", value: "sum" }, filename: "", mediaType: "" },
        { content: { $case: "data", value: { numbers: [10, -4] } }, filename: "", mediaType: "application/json" },
      ],
    });
    const task = await sendForTask(s, message);
    expect(task.status!.message!.parts[1]!.content).toEqual({ $case: "data", value: { numbers: [10, -4], sum: 6 } });
  });

  test.each([
    ["a word that is not a number", userMessage("sum 1 two"), grpc.status.INVALID_ARGUMENT, "INVALID_PARAMS", "message.parts[0].text"],
    ["no numbers", userMessage("sum"), grpc.status.INVALID_ARGUMENT, "INVALID_PARAMS", "message.parts"],
    ["another operation", userMessage("multiply 2 3"), grpc.status.FAILED_PRECONDITION, "UNSUPPORTED_OPERATION", undefined],
    [
      "a file",
      userMessage("sum 1", { parts: [{ content: { $case: "raw", value: Buffer.from("1,2") }, filename: "n.csv", mediaType: "text/csv" }] }),
      grpc.status.INVALID_ARGUMENT,
      "CONTENT_TYPE_NOT_SUPPORTED",
      "message.parts[0].raw",
    ],
    [
      "a malformed data part",
      userMessage("sum", { parts: [{ content: { $case: "data", value: { numbers: ["1"] } }, filename: "", mediaType: "" }] }),
      grpc.status.INVALID_ARGUMENT,
      "INVALID_PARAMS",
      "message.parts[0].data",
    ],
  ] as const)("refuses %s before any task, with its status and ErrorInfo", async (_name, message, code, reason, field) => {
    const before = await total();
    const { error } = await rpc(s).send(sendRequest(message));
    expectA2AError(error, code, reason);
    if (field !== undefined) expect(statusDetails(error!).badRequest!.fieldViolations.map((v) => v.field)).toEqual([field]);
    expect(await total()).toBe(before);
  });
});
