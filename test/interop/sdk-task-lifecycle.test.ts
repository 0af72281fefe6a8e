/**
 * Issue 3/4: the official @a2a-js/sdk client (discovered from our HTTP card, talking over its
 * own gRPC transport) drives every unary RPC of the task lifecycle against the real service.
 */
import { ClientFactory, type Client } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { TaskState, type Message, type Task } from "@a2a-js/sdk";
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { GRPC_STATUS_CODE, GrpcTaskNotCancelableError } from "@a2a-js/sdk/errors/grpc";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { aborted, closeTransport, gate, pollTask, rejection, sendRequest, startSdkSetup, type SdkSetup } from "./sdk-client.js";

let s: SdkSetup;
beforeAll(async () => {
  s = await startSdkSetup();
});
afterAll(() => s.close());

const isMessage = (result: Message | Task): result is Message => "messageId" in result;
const asTask = (result: Message | Task): Task => {
  if (isMessage(result)) throw new Error(`expected a task, got a message: ${JSON.stringify(result)}`);
  return result;
};
const text = (m: Pick<Message, "parts"> | undefined) => (m?.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");

describe("SendMessage", () => {
  test("R-SEND-1, R-SEND-14, R-CTX-1: a message-only answer reaches the SDK as a Message from the agent with a generated context id", async () => {
    const result = await s.client.sendMessage(sendRequest("hello there"));
    expect(isMessage(result)).toBe(true);
    const message = result as Message;
    expect(message.role).toBe(2 /* ROLE_AGENT */);
    expect(message.contextId).not.toBe("");
    expect(message.taskId).toBe("");
    expect(text(message)).toContain("hello there");
  });

  test("R-SEND-2, R-ART-3: the SDK's default send blocks until the task is COMPLETED and gets the assembled artifact", async () => {
    const task = asTask(await s.client.sendMessage(sendRequest("story")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.id).not.toBe("");
    expect(task.contextId).not.toBe("");
    expect(task.status?.timestamp).toBeDefined();
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]!.artifactId).toBe("story");
    expect(task.artifacts[0]!.parts).toHaveLength(4);
    expect(task.history[0]!.role).toBe(1 /* ROLE_USER */);
  });

  test("R-SEND-3, A-1: the SDK's polling mode (return_immediately) gets the task while it runs, with the user's message in its history", async () => {
    const release = gate();
    s.scripts.set("hold then finish", async (ctx) => {
      await ctx.working("holding");
      await release.promise;
      await ctx.complete("finished");
    });
    const factory = new ClientFactory({ transports: [new GrpcTransportFactory()], clientConfig: { polling: true } });
    const polling = await factory.createFromUrl(`http://127.0.0.1:${s.server.app.cardPort}`);
    try {
      const request = sendRequest("hold then finish");
      const task = asTask(await polling.sendMessage(request));
      expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status?.state);
      expect(task.history.map((m) => m.messageId)).toContain(request.message!.messageId);
      release.open();
      const done = await pollTask(polling, task.id, (t) => t.status?.state === TaskState.TASK_STATE_COMPLETED, "the held task to complete");
      expect(text(done.status?.message)).toBe("finished");
    } finally {
      closeTransport(polling.transport);
    }
  });

  test("R-SEND-12, R-CTX-4: a multi-turn follow-up with only task_id continues the INPUT_REQUIRED task to completion", async () => {
    const first = asTask(await s.client.sendMessage(sendRequest("trip")));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(text(first.status?.message)).toContain("Where do you want to fly to?");

    const second = asTask(await s.client.sendMessage(sendRequest("Lisbon", { taskId: first.id })));
    expect(second.id).toBe(first.id);
    expect(second.contextId).toBe(first.contextId);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(second.artifacts.map((a) => a.artifactId)).toEqual(["itinerary"]);
    expect(text(second.artifacts[0])).toContain("Lisbon");
  });
});

describe("GetTask", () => {
  test("R-GET-1, R-HIST-1..3: history_length unset gives the whole history, N the N most recent, 0 none", async () => {
    const trip = asTask(await s.client.sendMessage(sendRequest("trip")));
    await s.client.sendMessage(sendRequest("Oslo", { taskId: trip.id }));

    const full = await s.client.getTask({ tenant: "", id: trip.id });
    expect(full.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(full.artifacts).toHaveLength(1);
    const userTexts = full.history.filter((m) => m.role === 1).map(text);
    expect(userTexts).toEqual(["trip", "Oslo"]);

    const last = await s.client.getTask({ tenant: "", id: trip.id, historyLength: 1 });
    expect(last.history).toHaveLength(1);
    expect(last.history[0]).toEqual(full.history[full.history.length - 1]);

    const none = await s.client.getTask({ tenant: "", id: trip.id, historyLength: 0 });
    expect(none.history).toEqual([]);
    expect(none.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-SEND-5: configuration.history_length trims the history of the SendMessage answer", async () => {
    const task = asTask(await s.client.sendMessage(sendRequest("story", {}, { historyLength: 1 })));
    expect(task.history).toHaveLength(1);
    expect(text(task.history[0])).toBe("The story is complete.");
  });
});

describe("ListTasks", () => {
  test("R-LIST-2..8: context and status filters, newest first, cursor pages, total_size, artifacts only on request", async () => {
    const contextId = `sdk-list-${process.pid}-${Date.now()}`;
    const a = asTask(await s.client.sendMessage(sendRequest("story", { contextId })));
    const b = asTask(await s.client.sendMessage(sendRequest("trip", { contextId })));
    const c = asTask(await s.client.sendMessage(sendRequest("story", { contextId })));
    expect([a.contextId, b.contextId, c.contextId]).toEqual([contextId, contextId, contextId]); // R-CTX-2: kept as given

    const base = { tenant: "", contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", statusTimestampAfter: undefined };
    const all = await s.client.listTasks(base);
    expect(all.totalSize).toBe(3);
    expect(all.nextPageToken).toBe("");
    expect(all.tasks.map((t) => t.id).sort()).toEqual([a.id, b.id, c.id].sort());
    const stamps = all.tasks.map((t) => Date.parse(t.status!.timestamp!));
    expect([...stamps].sort((x, y) => y - x)).toEqual(stamps); // newest first
    expect(all.tasks.every((t) => t.artifacts.length === 0)).toBe(true); // include_artifacts unset

    const waiting = await s.client.listTasks({ ...base, status: TaskState.TASK_STATE_INPUT_REQUIRED });
    expect(waiting.tasks.map((t) => t.id)).toEqual([b.id]);
    expect(waiting.totalSize).toBe(1);

    const page1 = await s.client.listTasks({ ...base, pageSize: 2 });
    expect(page1.tasks).toHaveLength(2);
    expect(page1.pageSize).toBe(2);
    expect(page1.totalSize).toBe(3);
    expect(page1.nextPageToken).not.toBe("");
    const page2 = await s.client.listTasks({ ...base, pageSize: 2, pageToken: page1.nextPageToken });
    expect(page2.tasks).toHaveLength(1);
    expect(page2.nextPageToken).toBe("");
    expect([...page1.tasks, ...page2.tasks].map((t) => t.id)).toEqual(all.tasks.map((t) => t.id));

    const withArtifacts = await s.client.listTasks({ ...base, status: TaskState.TASK_STATE_COMPLETED, includeArtifacts: true, historyLength: 0 });
    expect(withArtifacts.tasks.map((t) => t.id).sort()).toEqual([a.id, c.id].sort());
    expect(withArtifacts.tasks.every((t) => t.artifacts.length === 1 && t.history.length === 0)).toBe(true);
  });
});

describe("CancelTask", () => {
  test("R-CANCEL-1, R-CANCEL-5: canceling a running task returns it CANCELED and stops the agent", async () => {
    let stopped = false;
    s.scripts.set("run until canceled", async (ctx) => {
      await ctx.working("running");
      await aborted(ctx.signal);
      stopped = true;
    });
    const task = asTask(await s.client.sendMessage(sendRequest("run until canceled", {}, { returnImmediately: true })));
    await pollTask(s.client, task.id, (t) => t.status?.state === TaskState.TASK_STATE_WORKING, "the task to work");

    const canceled = await s.client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(canceled.id).toBe(task.id);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await pollTask(s.client, task.id, () => stopped, "the agent to see the abort");
    expect((await s.client.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);

    // a second cancel is idempotent and hands back the task as it is.
    const again = await s.client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(again.status?.timestamp).toBe(canceled.status?.timestamp);
  });

  test("R-CANCEL-1: an INPUT_REQUIRED (interrupted) task can be canceled", async () => {
    const trip = asTask(await s.client.sendMessage(sendRequest("trip")));
    const canceled = await s.client.cancelTask({ tenant: "", id: trip.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  test.each([
    ["COMPLETED", "story", TaskState.TASK_STATE_COMPLETED],
    ["FAILED", "fail", TaskState.TASK_STATE_FAILED],
    ["REJECTED", "reject", TaskState.TASK_STATE_REJECTED],
  ])("R-CANCEL-2, A-4: a %s task gives TASK_NOT_CANCELABLE, surfaced by the SDK as TaskNotCancelableError", async (_name, word, state) => {
    const task = asTask(await s.client.sendMessage(sendRequest(word)));
    expect(task.status?.state).toBe(state);
    const error = await rejection(s.client.cancelTask({ tenant: "", id: task.id, metadata: undefined }));
    expect(error).toBeInstanceOf(TaskNotCancelableError);
    expect(error).toBeInstanceOf(GrpcTaskNotCancelableError);
    expect(error.name).toBe("TaskNotCancelableError");
    expect(error["reason"]).toBe("TASK_NOT_CANCELABLE");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
    expect(error["metadata"]).toEqual(expect.objectContaining({ task_id: task.id }));
    expect((await s.client.getTask({ tenant: "", id: task.id })).status?.state).toBe(state);
  });

  test("R-CANCEL-4: canceling an unknown task is TaskNotFoundError (NOT_FOUND)", async () => {
    const error = await rejection(s.client.cancelTask({ tenant: "", id: "no-such-task", metadata: undefined }));
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.NOT_FOUND);
  });
});

describe("GetExtendedAgentCard", () => {
  test("R-CAP-3: without the capability the SDK keeps the public card, and a direct call is UnsupportedOperationError", async () => {
    const card = await s.client.getAgentCard();
    expect(card.capabilities?.extendedAgentCard).toBe(false);
    expect(card.name).toBe("A2A demo agent");
    // The SDK never calls the RPC when the card says no; its transport does when asked directly.
    const error = await rejection(s.client.transport.getExtendedAgentCard({ tenant: "" }, { serviceParameters: { "A2A-Version": "1.0" } }));
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
  });

  describe("with an extended card", () => {
    let x: SdkSetup;
    let keysDir: string;
    const key = newApiKey();
    beforeAll(async () => {
      // R-XCARD-2: the extended card goes to authenticated callers only.
      keysDir = mkdtempSync(join(tmpdir(), "a2a-sdk-xcard-"));
      writeFileSync(join(keysDir, "keys"), `${apiKeyLine(key, { principal: "erin", tenants: undefined, scopes: [] })}\n`);
      x = await startSdkSetup({
        card: { extendedCard: { name: "A2A demo agent (extended)", description: "More for known callers." } },
        env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(keysDir, "keys") },
      });
    });
    afterAll(async () => {
      await x.close();
      rmSync(keysDir, { recursive: true, force: true });
    });

    test("R-XCARD-1, R-CARD-4: the SDK fetches the extended card over gRPC and replaces its cached card with it", async () => {
      const client: Client = x.client;
      const card = await client.getAgentCard({ serviceParameters: { "x-api-key": key } });
      expect(card.name).toBe("A2A demo agent (extended)");
      expect(card.description).toBe("More for known callers.");
      expect(card.capabilities?.extendedAgentCard).toBe(true);
      expect(card.capabilities?.streaming).toBe(true);
      expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.url, i.protocolVersion])).toEqual([
        ["GRPC", x.server.target, "1.0"],
        ["JSONRPC", expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/a2a\/jsonrpc$/), "1.0"],
        // then the 0.3 interfaces
        ["GRPC", x.server.target, "0.3"],
        ["JSONRPC", expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/a2a\/v0\.3\/jsonrpc$/), "0.3"],
        ["HTTP+JSON", expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/a2a\/v0\.3\/rest$/), "0.3"],
      ]);
    });
  });
});
