/**
 * Issue 34 items 1 and 7, R-BIND-1 / R-BIND-4: one scenario run on every binding the card lists
 * ends in equal results (ids and timestamps aside), and every row of the §5.4 error table a
 * binding can produce carries the same gRPC-equivalent code, ErrorInfo reason and BadRequest
 * fields on every binding.
 */
import { create, type JsonValue } from "@bufbuild/protobuf";
import {
  AgentCardSchema,
  AgentExtensionSchema,
  PartSchema,
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTaskPushNotificationConfigsResponseSchema,
  ListTasksRequestSchema,
  ListTasksResponseSchema,
  SendMessageRequestSchema,
  StreamResponseSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  type ListTaskPushNotificationConfigsResponse,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { sendRequest, startBindingsSetup, taskOf, watchStream, type BindingsSetup, type HeldRun } from "./bindings-support.js";
import { failureOf, type BindingDriver } from "./drivers/driver.js";
import { json, normalise } from "./normalise.js";

let s: BindingsSetup;
/**
 * The rows that need another configuration: push notifications off, no extended card, an
 * extension every call must activate, and text/plain as the only accepted input.
 */
let plain: BindingsSetup;
const REQUIRED_EXTENSION = "urn:test:required";
beforeAll(async () => {
  [s, plain] = await Promise.all([
    startBindingsSetup(),
    startBindingsSetup(
      { A2A_PUSH_NOTIFICATIONS: "false" },
      {
        extendedCard: undefined,
        extensions: [create(AgentExtensionSchema, { uri: REQUIRED_EXTENSION, required: true })],
        acceptedInputMediaTypes: ["text/plain"],
      },
    ),
  ]);
});
afterAll(async () => {
  await s?.close();
  await plain?.close();
});

const heldTask = (driver: BindingDriver, text: string) => s.heldTask(driver, text);

/** The whole scenario on one binding, as one JSON record. */
async function scenario(driver: BindingDriver): Promise<Record<string, JsonValue>> {
  const record: Record<string, JsonValue> = {};
  const task = (t: Task) => json(TaskSchema, t);
  const events = (list: StreamResponse[]) => list.map((e) => json(StreamResponseSchema, e));

  // Blocking send: the demo story runs to COMPLETED.
  const story = taskOf(await driver.send(sendRequest("story")));
  record["blocking"] = task(story);

  // Non-blocking send, then GetTask once the agent has finished.
  const later = await heldTask(driver, "ctl later");
  record["nonBlocking"] = task(later.task);
  await later.run.ctx.working("on it");
  await later.run.ctx.complete("done later");
  later.run.finish();
  record["afterGet"] = task(await driver.get(create(GetTaskRequestSchema, { id: later.task.id })));

  // Multi-turn: INPUT_REQUIRED, then the answer on the same task completes it.
  const trip = taskOf(await driver.send(sendRequest("trip")));
  const answered = taskOf(await driver.send(sendRequest("Paris", { taskId: trip.id, contextId: trip.contextId })));
  record["multiTurn"] = [task(trip), task(answered)];

  // Cancel a working task.
  const doomed = await heldTask(driver, "ctl cancel me");
  await doomed.run.ctx.working("working until canceled");
  doomed.run.ctx.signal.addEventListener("abort", () => doomed.run.finish());
  record["cancel"] = task(await driver.cancel(create(CancelTaskRequestSchema, { id: doomed.task.id })));

  // List by context: a second task in the story's context.
  const sibling = taskOf(await driver.send(sendRequest("story", { contextId: story.contextId })));
  const listed = await driver.list(create(ListTasksRequestSchema, { contextId: story.contextId, historyLength: 1 }));
  expect(listed.tasks.map((t) => t.id).sort()).toEqual([story.id, sibling.id].sort());
  record["list"] = json(ListTasksResponseSchema, listed);

  // Push config create / get / list / delete / list.
  const pushed = await heldTask(driver, "ctl push");
  const taskId = pushed.task.id;
  const config = { taskId, id: "hook-1", url: "http://127.0.0.1:9/hook", token: "t0k" };
  const made = await driver.createPushConfig(create(TaskPushNotificationConfigSchema, config));
  const got = await driver.getPushConfig(create(GetTaskPushNotificationConfigRequestSchema, { taskId, id: made.id }));
  const configs = await driver.listPushConfigs(create(ListTaskPushNotificationConfigsRequestSchema, { taskId }));
  await driver.deletePushConfig(create(DeleteTaskPushNotificationConfigRequestSchema, { taskId, id: made.id }));
  const afterDelete = await driver.listPushConfigs(create(ListTaskPushNotificationConfigsRequestSchema, { taskId }));
  await pushed.run.ctx.complete();
  pushed.run.finish();
  const configJson = (c: TaskPushNotificationConfig) => json(TaskPushNotificationConfigSchema, c);
  const listJson = (l: ListTaskPushNotificationConfigsResponse) => json(ListTaskPushNotificationConfigsResponseSchema, l);
  record["push"] = [configJson(made), configJson(got), listJson(configs), listJson(afterDelete)];

  // SendStreamingMessage: the test publishes once the stream's first event (the task) is in.
  const streamed = watchStream((onEvent) => driver.stream(sendRequest("ctl stream"), { onEvent }));
  const streamRun = await s.nextHeldRun();
  await streamed.opened;
  await publishSteps(streamRun);
  record["stream"] = events(await streamed.events);

  // SubscribeToTask on a task the agent holds, then the same steps.
  const watched = await heldTask(driver, "ctl subscribe");
  const subscribed = watchStream((onEvent) => driver.subscribe(create(SubscribeToTaskRequestSchema, { id: watched.task.id }), { onEvent }));
  await subscribed.opened;
  await publishSteps(watched.run);
  record["subscribe"] = events(await subscribed.events);

  record["extendedCard"] = json(AgentCardSchema, await driver.extendedCard(create(GetExtendedAgentCardRequestSchema)));
  return record;
}

/** Working, two artifact chunks, completed: what the streams must carry. */
async function publishSteps(run: HeldRun): Promise<void> {
  await run.ctx.working("step one");
  await run.ctx.artifact({ artifactId: "out", name: "out", parts: ["chunk one, "] });
  await run.ctx.artifact({ artifactId: "out", name: "out", parts: ["chunk two"] }, { append: true, lastChunk: true });
  await run.ctx.complete("streamed");
  run.finish();
}

const state = (record: Record<string, JsonValue>, path: string): unknown =>
  path.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], record);

test("R-BIND-1, R-BIND-4: one scenario on every binding ends in equal tasks, lists, push configs, streams and cards", async () => {
  const records = new Map<string, JsonValue>();
  for (const driver of s.drivers) records.set(driver.name, normalise(await scenario(driver)));
  const grpc = records.get("grpc") as Record<string, JsonValue>;
  // The scenario did what it says (on gRPC; the others must then equal it).
  expect({
    blocking: state(grpc, "blocking.status.state"),
    nonBlocking: state(grpc, "nonBlocking.status.state"),
    afterGet: state(grpc, "afterGet.status.state"),
    multiTurn: (grpc["multiTurn"] as Array<Record<string, JsonValue>>).map((t) => state(t, "status.state")),
    cancel: state(grpc, "cancel.status.state"),
    listed: (state(grpc, "list.tasks") as unknown[]).length,
    configs: (grpc["push"] as Array<Record<string, JsonValue>>).slice(2).map((l) => ((l["configs"] ?? []) as unknown[]).length),
    stream: (grpc["stream"] as Array<Record<string, JsonValue>>).map((e) => Object.keys(e)[0]),
    subscribe: (grpc["subscribe"] as Array<Record<string, JsonValue>>).map((e) => Object.keys(e)[0]),
  }).toEqual({
    blocking: "TASK_STATE_COMPLETED",
    nonBlocking: "TASK_STATE_WORKING",
    afterGet: "TASK_STATE_COMPLETED",
    multiTurn: ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"],
    cancel: "TASK_STATE_CANCELED",
    listed: 2,
    configs: [1, 0],
    // The task, the held run's WORKING, then publishSteps.
    stream: ["task", "statusUpdate", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"],
    subscribe: ["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"],
  });
  expect(records.size).toBe(s.drivers.length);
  for (const [name, record] of records) expect({ binding: name, record }).toEqual({ binding: name, record: grpc });
});

/** A task of the demo story, finished (terminal), made on the binding under test. */
async function finishedTask(driver: BindingDriver): Promise<string> {
  return taskOf(await driver.send(sendRequest("story"))).id;
}

interface ErrorRow {
  readonly row: string;
  /** The server the row needs (`plain`: see above). */
  readonly on?: "plain";
  readonly call: (driver: BindingDriver) => Promise<unknown>;
  readonly expected: { code: string; reason?: string; domain?: string; fields?: string[] };
}

const A2A = "a2a-protocol.org";
const noSuchTask = () => create(GetTaskRequestSchema, { id: "no-such-task" });
const activated = { extensions: [REQUIRED_EXTENSION] };
/** Authentication's own ErrorInfo (not an A2A error, BQ-9): same reason on every binding. */
const AUTH = "auth.a2a-grpc-server";

const ERROR_ROWS: readonly ErrorRow[] = [
  { row: "TaskNotFoundError", call: (d) => d.get(noSuchTask()), expected: { code: "NOT_FOUND", reason: "TASK_NOT_FOUND" } },
  {
    row: "TaskNotCancelableError (a completed task)",
    call: async (d) => d.cancel(create(CancelTaskRequestSchema, { id: await finishedTask(d) })),
    expected: { code: "FAILED_PRECONDITION", reason: "TASK_NOT_CANCELABLE" },
  },
  {
    row: "PushNotificationNotSupportedError (push off)",
    on: "plain",
    call: (d) => d.createPushConfig(create(TaskPushNotificationConfigSchema, { taskId: "any", url: "http://127.0.0.1:9/hook" }), activated),
    expected: { code: "FAILED_PRECONDITION", reason: "PUSH_NOTIFICATION_NOT_SUPPORTED" },
  },
  {
    row: "UnsupportedOperationError (subscribe to a terminal task, R-SUB-2)",
    call: async (d) => d.subscribe(create(SubscribeToTaskRequestSchema, { id: await finishedTask(d) })),
    expected: { code: "FAILED_PRECONDITION", reason: "UNSUPPORTED_OPERATION" },
  },
  // EXTENDED_AGENT_CARD_NOT_CONFIGURED cannot be reached from a configuration: the card declares
  // the capability exactly when an extended card is given; without it the answer is R-CAP-3's.
  {
    row: "UnsupportedOperationError (extended card not declared, R-CAP-3)",
    on: "plain",
    call: (d) => d.extendedCard(create(GetExtendedAgentCardRequestSchema), activated),
    expected: { code: "FAILED_PRECONDITION", reason: "UNSUPPORTED_OPERATION" },
  },
  {
    row: "ContentTypeNotSupportedError (an image where text/plain is the only input)",
    on: "plain",
    call: (d) => {
      const request = sendRequest("look");
      request.message!.parts = [create(PartSchema, { content: { case: "raw", value: new Uint8Array([137, 80]) }, mediaType: "image/png" })];
      return d.send(request, activated);
    },
    expected: { code: "INVALID_ARGUMENT", reason: "CONTENT_TYPE_NOT_SUPPORTED", fields: ["message.parts[0].media_type"] },
  },
  {
    row: "InvalidAgentResponseError (the agent says nothing)",
    call: (d) => d.send(sendRequest("mute")),
    expected: { code: "INTERNAL", reason: "INVALID_AGENT_RESPONSE" },
  },
  {
    row: "ExtensionSupportRequiredError (a required extension not activated)",
    on: "plain",
    call: (d) => d.get(noSuchTask()),
    expected: { code: "FAILED_PRECONDITION", reason: "EXTENSION_SUPPORT_REQUIRED" },
  },
  {
    row: "VersionNotSupportedError (no version sent, A-3)",
    call: (d) => d.get(noSuchTask(), { version: null }),
    expected: { code: "FAILED_PRECONDITION", reason: "VERSION_NOT_SUPPORTED" },
  },
  {
    row: "VersionNotSupportedError (version 2.0)",
    call: (d) => d.get(noSuchTask(), { version: "2.0" }),
    expected: { code: "FAILED_PRECONDITION", reason: "VERSION_NOT_SUPPORTED" },
  },
  {
    row: "invalid params: SendMessage without a message (BadRequest field)",
    call: (d) => d.send(create(SendMessageRequestSchema)),
    expected: { code: "INVALID_ARGUMENT", fields: ["message"] },
  },
  {
    row: "invalid params: ListTasks pageSize 0 (A-13)",
    call: (d) => d.list(create(ListTasksRequestSchema, { pageSize: 0 })),
    expected: { code: "INVALID_ARGUMENT", fields: ["page_size"] },
  },
  {
    row: "unauthenticated: no credential",
    call: (d) => d.get(noSuchTask(), { apiKey: null }),
    expected: { code: "UNAUTHENTICATED", reason: "CREDENTIALS_MISSING", domain: AUTH },
  },
  {
    row: "unauthenticated: a key nobody holds",
    call: (d) => d.get(noSuchTask(), { apiKey: "a2a_not-a-real-key" }),
    expected: { code: "UNAUTHENTICATED", reason: "CREDENTIALS_INVALID", domain: AUTH },
  },
  {
    row: "R-BIND-8: the version is checked before the credential",
    call: (d) => d.get(noSuchTask(), { apiKey: null, version: null }),
    expected: { code: "FAILED_PRECONDITION", reason: "VERSION_NOT_SUPPORTED" },
  },
  {
    row: "R-BIND-8: the credential is checked before the request",
    call: (d) => d.send(create(SendMessageRequestSchema), { apiKey: null }),
    expected: { code: "UNAUTHENTICATED", reason: "CREDENTIALS_MISSING", domain: AUTH },
  },
];

describe("R-BIND-4, R-BIND-38: each §5.4 row gives the same code, ErrorInfo reason and BadRequest fields on every binding", () => {
  test.each(ERROR_ROWS)("$row", async ({ on, call, expected }) => {
    const setup = on === "plain" ? plain : s;
    const want = {
      code: expected.code,
      ...(expected.reason === undefined ? {} : { reason: expected.reason, domain: expected.domain ?? A2A }),
      fields: expected.fields ?? [],
    };
    for (const driver of setup.drivers) {
      const failure = await failureOf(call(driver));
      expect({ binding: driver.name, ...failure.facts() }).toEqual({ binding: driver.name, ...want });
    }
  });
});
