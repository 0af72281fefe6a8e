import { toJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ListTasksResponseSchema, type ListTasksRequestSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { intOption, stringOption, type Command, type OptionValues } from "../command.js";
import { UsageError } from "../exit-codes.js";
import { parseState, taskRow } from "../render.js";

/** The filter options to repeat with --page: a page token is only valid for the filters it was made for. */
function sameFilters(values: OptionValues): string {
  return (
    ["context", "state", "since", "limit", "history"]
      .map((name) => [name, stringOption(values, name)] as const)
      .filter(([, v]) => v !== undefined)
      .map(([name, v]) => ` --${name} ${v}`)
      .join("") + (values.artifacts ? " --artifacts" : "")
  );
}

export const listCommand: Command = {
  name: "list",
  summary: "list tasks, newest first (filters: --context, --state, --since; paging: --limit, --page, --all)",
  help: `Usage: a2a list [options]

  --context ID     only the tasks of this conversation
  --state STATE    only tasks in this state (working, completed, input-required, ...)
  --since TIME     only tasks whose status changed at or after TIME (ISO 8601)
  --limit N        tasks per page, 1..100 (default: the server's, 50)
  --page TOKEN     the page to read (printed after each page)
  --all            read every page
  --artifacts      include the tasks' artifacts (in --json)
  --history N      include up to N history messages per task (in --json)

With --json: one ListTasksResponse per page (JSON Lines with --all).`,
  options: {
    context: { type: "string" },
    state: { type: "string" },
    since: { type: "string" },
    limit: { type: "string" },
    page: { type: "string" },
    all: { type: "boolean" },
    artifacts: { type: "boolean" },
    history: { type: "string" },
  },
  async run(ctx) {
    const stateArg = stringOption(ctx.values, "state");
    const status = stateArg === undefined ? undefined : parseState(stateArg);
    if (stateArg !== undefined && status === undefined)
      throw new UsageError(
        `--state "${stateArg}" is not a task state (submitted, working, completed, failed, canceled, input-required, rejected, auth-required)`,
      );
    const since = stringOption(ctx.values, "since");
    const sinceDate = since === undefined ? undefined : new Date(since);
    if (sinceDate && Number.isNaN(sinceDate.getTime())) throw new UsageError(`--since "${since}" is not a date (ISO 8601, e.g. 2026-12-01T10:00:00Z)`);
    const pageSize = intOption(ctx.values, "limit", 1, 100);
    const historyLength = intOption(ctx.values, "history", 0, 2 ** 31 - 1);
    const { client, tenant } = await ctx.connect();

    let pageToken = stringOption(ctx.values, "page") ?? "";
    let shown = 0;
    for (;;) {
      const request: MessageInitShape<typeof ListTasksRequestSchema> = {
        tenant,
        contextId: stringOption(ctx.values, "context") ?? "",
        pageToken,
        ...(status !== undefined ? { status } : {}),
        ...(sinceDate ? { statusTimestampAfter: timestampFromDate(sinceDate) } : {}),
        ...(pageSize !== undefined ? { pageSize } : {}),
        ...(historyLength !== undefined ? { historyLength } : {}),
        ...(ctx.values.artifacts ? { includeArtifacts: true } : {}),
      };
      const page = await client.unary("listTasks", request);
      // totalSize 0 and an empty nextPageToken are answers here, not absent fields.
      if (ctx.out.json)
        ctx.out.data({
          ...(toJson(ListTasksResponseSchema, page) as object),
          nextPageToken: page.nextPageToken,
          pageSize: page.pageSize,
          totalSize: page.totalSize,
        });
      else for (const task of page.tasks) ctx.out.line(taskRow(ctx.out, task));
      shown += page.tasks.length;
      pageToken = page.nextPageToken;
      if (!ctx.values.all || !pageToken) {
        if (!ctx.out.json) {
          ctx.out.line(ctx.out.style("dim", `${shown} of ${page.totalSize} task${page.totalSize === 1 ? "" : "s"}`));
          if (pageToken) ctx.out.line(ctx.out.style("dim", `next page: a2a list --page ${pageToken}${sameFilters(ctx.values)}`));
        }
        return;
      }
    }
  },
};
