import { toJson } from "@bufbuild/protobuf";
import { TaskSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { intOption, required, type Command } from "../command.js";
import { renderTask } from "../render.js";

export const getCommand: Command = {
  name: "get",
  summary: "show a task: state, status message, artifacts (--history N: its messages too)",
  help: `Usage: a2a get TASK_ID [--history N]

  --history N   include up to N messages of the task's history (0: none; default: the server's)`,
  options: { history: { type: "string" } },
  async run(ctx) {
    const id = required(ctx, 0, "TASK_ID");
    const historyLength = intOption(ctx.values, "history", 0, 2 ** 31 - 1);
    const { client, tenant } = await ctx.connect();
    const task = await client.unary("getTask", { id, tenant, ...(historyLength !== undefined ? { historyLength } : {}) });
    if (ctx.out.json) return ctx.out.data(toJson(TaskSchema, task));
    renderTask(ctx.out, task, { history: historyLength !== 0 });
  },
};
