import { expect, test } from "@jest/globals";
import { create, toBinary } from "@bufbuild/protobuf";
import { ArtifactSchema, ListTasksResponseSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { encodeListTasksResponse, measureTask } from "../../src/codec/list-response-encoder.js";
import { at, hex, message, taskWith, textPart } from "./support.js";

const tasks = () => [
  taskWith({
    id: "a",
    status: { state: TaskState.COMPLETED, timestamp: at(1_700_000_000n, 5000) },
    history: [message({ parts: [textPart("hé".repeat(300))] })],
  }),
  taskWith({ id: "b", artifacts: [create(ArtifactSchema, { artifactId: "x", parts: [textPart("y".repeat(200))] })] }),
];

test("A-34: the ListTasks reply written from the measured tasks' bytes is toBinary's, with and without token, sizes and tasks", () => {
  for (const init of [
    { tasks: tasks(), nextPageToken: "abc.def", pageSize: 50, totalSize: 300 },
    { tasks: tasks(), nextPageToken: "", pageSize: 100, totalSize: 2 },
    { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 },
  ]) {
    const response = create(ListTasksResponseSchema, init);
    for (const task of response.tasks.slice(0, 1)) measureTask(task); // one measured (cached), one not
    expect(hex(encodeListTasksResponse(response)!)).toBe(hex(toBinary(ListTasksResponseSchema, response)));
  }
});

test("A-34: measureTask gives the task's encoded size", () => {
  const [task] = tasks();
  expect(measureTask(task!)).toBe(toBinary(ListTasksResponseSchema, create(ListTasksResponseSchema, { tasks: [task!] })).byteLength - 3);
});

test("A-34: the reply reuses the bytes measured for a page (create keeps the task objects), so a listed task is encoded once", () => {
  const [task] = tasks();
  measureTask(task!);
  const response = create(ListTasksResponseSchema, { tasks: [task!] });
  expect(response.tasks[0]).toBe(task);
  task!.id = "changed-after-measuring"; // the cached bytes still say "a": proof they were reused
  expect(Buffer.from(encodeListTasksResponse(response)!).includes(Buffer.from("changed-after-measuring"))).toBe(false);
});
