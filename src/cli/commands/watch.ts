import { required, type Command } from "../command.js";
import { showStream } from "../stream-view.js";

export const watchCommand: Command = {
  name: "watch",
  summary: "follow a task live (SubscribeToTask) until it ends; Ctrl-C stops watching, not the task",
  help: `Usage: a2a watch TASK_ID

Shows the task's current state, then every change as it happens: state changes, the
agent's progress messages, artifact text as it streams, and a summary at the end.
Ctrl-C cancels the subscription only: the task goes on (exit code 130).`,
  options: {},
  async run(ctx) {
    const id = required(ctx, 0, "TASK_ID");
    const { client, tenant } = await ctx.connect();
    return showStream(ctx, client.stream("subscribeToTask", { id, tenant }), "watching");
  },
};
