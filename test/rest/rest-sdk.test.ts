/**
 * Issue 34 item 3: the official @a2a-js/sdk 1.3.0 client over HTTP+JSON, which its ClientFactory
 * picks from the card (A2A_PREFERRED_BINDING=rest lists it first), drives every operation of the
 * service: the same checks the JSON-RPC suite makes.
 */
import { TaskState, type Message, type Task } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, type Client } from "@a2a-js/sdk/client";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { aborted, collect, kind, pollTask, rejection, sendRequest } from "../interop/sdk-client.js";
import { startRestSetup, type RestSetup } from "./rest-support.js";

let s: RestSetup;
let alice: Client;
beforeAll(async () => {
  s = await startRestSetup({ A2A_PREFERRED_BINDING: "rest" });
  alice = await s.restClient(s.aliceKey);
});
afterAll(() => s.close());

const asTask = (result: Message | Task): Task => {
  if ("messageId" in result) throw new Error(`expected a task, got a message: ${JSON.stringify(result)}`);
  return result;
};

const finalState = (events: Array<{ payload?: unknown }>) => (events.at(-1)!.payload as { value: { status?: { state: TaskState } } }).value.status?.state;

describe("the card and the binding", () => {
  test("R-BIND-15: A2A_PREFERRED_BINDING=rest lists HTTP+JSON first, then gRPC and JSON-RPC", async () => {
    const card = (await (await fetch(`${s.base}/.well-known/agent-card.json`)).json()) as { supportedInterfaces: Array<Record<string, string>> };
    expect(card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`)).toEqual([
      "HTTP+JSON 1.0",
      "GRPC 1.0",
      "JSONRPC 1.0",
      // the 0.3 entries follow, HTTP+JSON first here too
      "HTTP+JSON 0.3",
      "JSONRPC 0.3",
      "GRPC 0.3",
    ]);
  });

  test("R-BIND-1: the SDK's factory, told nothing but the card, picks HTTP+JSON", async () => {
    const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory(), new RestTransportFactory()] });
    const client = await factory.createFromUrl(s.base);
    expect(client.transport.protocolName).toBe("HTTP+JSON");
    expect(alice.transport.protocolName).toBe("HTTP+JSON");
  });
});

describe("every operation through the SDK over HTTP+JSON", () => {
  test("R-HTTP-1: blocking SendMessage returns the finished task; GetTask reads it", async () => {
    const task = asTask(await alice.sendMessage(sendRequest("story")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const read = await alice.getTask({ tenant: "", id: task.id, historyLength: 1 });
    expect([read.id, read.status?.state]).toEqual([task.id, TaskState.TASK_STATE_COMPLETED]);
  });

  test("R-HTTP-1: SendMessage with returnImmediately answers before the agent finishes; CancelTask cancels", async () => {
    s.scripts.set("run until canceled", async (ctx) => {
      await ctx.working("running");
      await aborted(ctx.signal);
    });
    const task = asTask(await alice.sendMessage(sendRequest("run until canceled", {}, { returnImmediately: true })));
    await pollTask(alice, task.id, (t) => t.status?.state === TaskState.TASK_STATE_WORKING, "the task to work");
    const canceled = await alice.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  test("R-HTTP-6, R-BIND-25: ListTasks by query parameters lists the caller's tasks with the list fields present", async () => {
    const task = asTask(await alice.sendMessage(sendRequest("story")));
    const listed = await alice.listTasks({
      tenant: "",
      contextId: task.contextId,
      status: TaskState.TASK_STATE_COMPLETED,
      pageToken: "",
      pageSize: 10,
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
    expect(listed.pageSize).toBe(10);
  });

  test("R-HTTP-13: SendStreamingMessage streams the task, then its updates, to the terminal state", async () => {
    const events = await collect(alice.sendMessageStream(sendRequest("story")));
    expect(kind(events[0]!)).toBe("task");
    expect(kind(events.at(-1)!)).toBe("statusUpdate");
    expect(finalState(events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-HTTP-13, R-BIND-3: SubscribeToTask follows a running task to its end", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    s.scripts.set("hold", async (ctx) => {
      await ctx.working("holding");
      await held;
      await ctx.complete("done");
    });
    const task = asTask(await alice.sendMessage(sendRequest("hold", {}, { returnImmediately: true })));
    await pollTask(alice, task.id, (t) => t.status?.state === TaskState.TASK_STATE_WORKING, "the task to work");
    const stream = alice.resubscribeTask({ tenant: "", id: task.id });
    const first = await stream.next();
    expect(kind(first.value!)).toBe("task");
    release();
    const rest = [];
    for await (const event of stream) rest.push(event);
    expect(finalState(rest)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  test("R-HTTP-1, R-PUSH: the four push-config operations", async () => {
    const task = asTask(await alice.sendMessage(sendRequest("story")));
    const made = await alice.createTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      id: "hook-1",
      url: "http://127.0.0.1:9/hook",
      token: "t",
      authentication: undefined,
    });
    expect(made.id).toBe("hook-1");
    const got = await alice.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" });
    expect(got.url).toBe("http://127.0.0.1:9/hook");
    const listed = await alice.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
    expect(listed.configs.map((c) => c.id)).toEqual(["hook-1"]);
    await alice.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" });
    const after = await alice.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
    expect(after.configs).toEqual([]);
  });

  test("R-XCARD-1: GetExtendedAgentCard with credentials", async () => {
    const card = await alice.getAgentCard();
    expect(card.description).toBe("the extended card");
  });

  test("A-31, R-BIND-38: another principal's task is TaskNotFoundError to the SDK", async () => {
    const task = asTask(await alice.sendMessage(sendRequest("story")));
    const bob = await s.restClient(s.bobKey);
    expect(await rejection(bob.getTask({ tenant: "", id: task.id }))).toBeInstanceOf(TaskNotFoundError);
  });
});

describe("one call seam for every binding", () => {
  test("R-BIND-2: an HTTP+JSON call gets the RPC log line and the call metrics, labelled with its binding", async () => {
    await rejection(alice.getTask({ tenant: "", id: "seam-probe" }));
    const metrics = await (await fetch(`${s.base}/metrics`)).text();
    expect(metrics).toMatch(
      /rpc_server_call_duration_seconds_count\{rpc_system="rest",rpc_service="lf\.a2a\.v1\.A2AService",rpc_method="GetTask",rpc_grpc_status_code="5",a2a_version="1\.0"\} [1-9]/,
    );
    const line = s.server.lines.find((l) => l["task_id"] === "seam-probe" && l["binding"] === "rest");
    expect(line).toEqual(expect.objectContaining({ principal: "apikey:alice", service: "lf.a2a.v1.A2AService" }));
  });
});
