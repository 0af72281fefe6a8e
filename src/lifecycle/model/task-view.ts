import { create } from "@bufbuild/protobuf";
import { TaskSchema, type Task } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/** R-HIST: undefined = as stored; 0 = no history; N = the N most recent messages. Never mutates `task`. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || task.history.length <= historyLength) return task;
  return create(TaskSchema, { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) });
}
