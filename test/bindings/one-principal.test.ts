/**
 * Issue 34 item 5, R-BIND-3: a task is one object whichever binding made it. The
 * task alice makes on one binding is the same task (timestamps included, R-BIND-26) when she
 * reads it on every other, she can subscribe to it and cancel it there, and to bob it does not
 * exist on any binding.
 */
import { create } from "@bufbuild/protobuf";
import {
  CancelTaskRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskState,
  type StreamResponse,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { startBindingsSetup, watchStream, type BindingsSetup } from "./bindings-support.js";
import { failureOf, type BindingDriver } from "./drivers/driver.js";
import { json } from "./normalise.js";

let s: BindingsSetup;
beforeAll(async () => {
  s = await startBindingsSetup();
});
afterAll(async () => {
  await s?.close();
});

/** Subscribes: `opened` at the first event (the task), `events` when the stream ends. */
const subscription = (driver: BindingDriver, taskId: string) =>
  watchStream((onEvent) => driver.subscribe(create(SubscribeToTaskRequestSchema, { id: taskId }), { onEvent }));

const stateOf = (event: StreamResponse | undefined) =>
  event?.payload.case === "task" || event?.payload.case === "statusUpdate" ? TaskState[event.payload.value.status!.state] : event?.payload.case;

// Every binding makes a task; every binding (its maker included) reads, subscribes and cancels.
test("R-BIND-3: a task alice made over any binding is hers on every binding, and bob's on none", async () => {
  expect(s.drivers.map((d) => d.name)).toEqual(expect.arrayContaining(["grpc", "jsonrpc"]));
  for (const maker of s.drivers) await oneTaskEverywhere(maker);
});

async function oneTaskEverywhere(maker: BindingDriver): Promise<void> {
  const { task, run } = await s.heldTask(maker, `ctl made over ${maker.name}`);
  const get = create(GetTaskRequestSchema, { id: task.id });
  const asMaker = json(TaskSchema, await maker.get(get));

  for (const reader of s.drivers) {
    // Alice: the very same task, field for field, on every binding.
    expect({ reader: reader.name, task: json(TaskSchema, await reader.get(get)) }).toEqual({ reader: reader.name, task: asMaker });
    // Bob: TASK_NOT_FOUND for every operation on a task id, never a hint that it exists.
    const bob = { apiKey: s.bobKey };
    const refusals = [
      await failureOf(reader.get(get, bob)),
      await failureOf(reader.cancel(create(CancelTaskRequestSchema, { id: task.id }), bob)),
      await failureOf(reader.subscribe(create(SubscribeToTaskRequestSchema, { id: task.id }), bob)),
      await failureOf(reader.createPushConfig(create(TaskPushNotificationConfigSchema, { taskId: task.id, url: "http://127.0.0.1:9/hook" }), bob)),
    ];
    expect({ reader: reader.name, reasons: refusals.map((e) => e.info?.reason) }).toEqual({ reader: reader.name, reasons: Array(4).fill("TASK_NOT_FOUND") });
    const bobsList = await reader.list(create(ListTasksRequestSchema, { contextId: task.contextId }), bob);
    expect({ reader: reader.name, bobSees: bobsList.tasks.length }).toEqual({ reader: reader.name, bobSees: 0 });
  }

  // Alice subscribes on every binding at once, then cancels on the binding after the maker.
  const subscriptions = s.drivers.map((d) => ({ name: d.name, ...subscription(d, task.id) }));
  await Promise.all(subscriptions.map((sub) => sub.opened));
  const canceller = s.drivers[(s.drivers.indexOf(maker) + 1) % s.drivers.length]!;
  const canceled = await canceller.cancel(create(CancelTaskRequestSchema, { id: task.id }));
  run.finish();
  expect(canceled.status?.state).toBe(TaskState.CANCELED);
  for (const sub of subscriptions) {
    const events = await sub.events;
    expect({ reader: sub.name, first: stateOf(events[0]), last: stateOf(events.at(-1)) }).toEqual({
      reader: sub.name,
      first: "WORKING",
      last: "CANCELED",
    });
  }
  // And the canceled task reads the same everywhere.
  const after = json(TaskSchema, await maker.get(get));
  for (const reader of s.drivers) expect({ reader: reader.name, task: json(TaskSchema, await reader.get(get)) }).toEqual({ reader: reader.name, task: after });
}
