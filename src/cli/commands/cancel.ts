import { toJson } from "@bufbuild/protobuf";
import { TaskSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { required, type Command } from "../command.js";
import { renderTask } from "../render.js";

export const cancelCommand: Command = {
  name: "cancel",
  summary: "cancel a task",
  help: `Usage: a2a cancel TASK_ID

Asks the agent to stop the task; prints the task as it is after the cancel (CANCELED).`,
  options: {},
  async run(ctx) {
    const id = required(ctx, 0, "TASK_ID");
    const { client, tenant } = await ctx.connect();
    const task = await client.unary("cancelTask", { id, tenant });
    if (ctx.out.json) return ctx.out.data(toJson(TaskSchema, task));
    renderTask(ctx.out, task);
  },
};
