/**
 * Issue 14: the README's `my-agent.mjs` example, taken verbatim from README.md, loaded by the
 * server's own agent loader and run behind a real server, through the ts-proto client and the
 * official @a2a-js/sdk client. If the README's example stops working, this fails.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientFactory, type Client } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Task } from "@a2a-js/sdk";
import { loadAgent } from "../../src/agents/agent-loader.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { TaskState, expectA2AError, messageOf, rpc, sendRequest, statusDetails, taskOf, textOf, userMessage } from "../e2e/e2e-helpers.js";
import { closeTransport, rejection, sendRequest as sdkRequest } from "../interop/sdk-client.js";

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

/** The fenced js block that starts with `// my-agent.mjs`, exactly as written. */
function readmeExample(): string {
  const match = /```js\n(\/\/ my-agent\.mjs\n[\s\S]*?)```/.exec(README);
  if (!match) throw new Error("README.md has no ```js block starting with // my-agent.mjs");
  return match[1]!;
}

const LONG = "A text long enough to be worth a summary, surely.";
let dir: string;
let s: A2ATestServer;
let sdk: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "readme-agent-"));
  const file = join(dir, "my-agent.mjs");
  writeFileSync(file, readmeExample());
  s = await startA2AServer({ agent: await loadAgent(file), env: { A2A_CARD_LISTEN: "127.0.0.1:0" }, advertiseBoundAddress: true });
  sdk = await new ClientFactory({ transports: [new GrpcTransportFactory()] }).createFromUrl(`http://127.0.0.1:${s.app.cardPort}`);
});
afterAll(async () => {
  closeTransport(sdk.transport);
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("README: the my-agent.mjs example runs as written", () => {
  test("the example is the one the README shows to run (A2A_AGENT_MODULE=./my-agent.mjs) and uses the package's helpers", () => {
    expect(README).toContain("A2A_AGENT_MODULE=./my-agent.mjs npm start");
    expect(readmeExample()).toMatch(/from "a2a-grpc-server"/);
  });

  test("its card is served", async () => {
    const card = await (await fetch(`http://127.0.0.1:${s.app.cardPort}/.well-known/agent-card.json`)).json();
    expect(card).toMatchObject({ name: "Summarizer", skills: [{ id: "summarize" }] });
  });

  test("a short text: a Message and no task", async () => {
    const answer = messageOf((await rpc(s).send(sendRequest(userMessage("Hi there")))).response!);
    expect(textOf(answer)).toBe('That is short enough already: "Hi there"');
  });

  test("a long text: a COMPLETED task whose artifact holds the summary and a data part (A-27)", async () => {
    const task = taskOf((await rpc(s).send(sendRequest(userMessage(LONG)))).response!);
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status!.message)).toBe("Done.");
    expect(task.artifacts[0]!.name).toBe("summary");
    expect(task.artifacts[0]!.parts.map((p) => p.content)).toEqual([
      { $case: "text", value: `${LONG.slice(0, 40)}…` },
      { $case: "data", value: { words: 10, characters: LONG.length } },
    ]);
  });

  test("no text: the call is refused with INVALID_PARAMS on message.parts, and no task is made", async () => {
    const before = (await rpc(s).list()).response!.totalSize;
    const dataOnly = userMessage("", { parts: [{ content: { $case: "data", value: { q: 1 } }, filename: "", mediaType: "" }] });
    const { error } = await rpc(s).send(sendRequest(dataOnly));
    expectA2AError(error, grpc.status.INVALID_ARGUMENT, "INVALID_PARAMS");
    expect(statusDetails(error!).badRequest!.fieldViolations.map((v) => v.field)).toEqual(["message.parts"]);
    expect((await rpc(s).list()).response!.totalSize).toBe(before);
  });

  test("through the SDK client too: the task with its data part, and the refusal as RequestMalformedError", async () => {
    const task = (await sdk.sendMessage(sdkRequest(LONG))) as Task;
    expect(task.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]!.parts[1]!.content).toEqual({ $case: "data", value: { words: 10, characters: LONG.length } });
    const error = await rejection(sdk.sendMessage(sdkRequest("   ")));
    expect(error).toBeInstanceOf(RequestMalformedError);
  });
});
