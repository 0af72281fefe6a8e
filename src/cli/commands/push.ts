import { toJson } from "@bufbuild/protobuf";
import { ListTaskPushNotificationConfigsResponseSchema, TaskPushNotificationConfigSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { intOption, required, stringOption, type Command, type CommandContext } from "../command.js";
import { UsageError } from "../exit-codes.js";
import { renderPushConfig } from "../render.js";
import { DEFAULT_CARD_URL, fetchCard, httpDispatcher } from "../connection.js";

/** The card extension a server of ours publishes its webhook signature key in (the CLI is a client: it reads the card, it does not import the server). */
const PUSH_SIGNATURE_EXTENSION = "urn:a2a-grpc-server:extension:push-signature:v1";

const HELP = `Usage:
  a2a push add TASK_ID URL [--id ID] [--notify-token TOKEN] [--auth-scheme SCHEME --auth-credentials CREDS]
  a2a push get TASK_ID CONFIG_ID
  a2a push list TASK_ID [--limit N] [--page TOKEN]
  a2a push rm TASK_ID CONFIG_ID
  a2a push public-key [--card URL] [--pem]

Push notification configs of a task: where the server posts the task's updates.
  --notify-token TOKEN       a token the server sends back with each notification
  --auth-scheme SCHEME       how the server authenticates to URL (e.g. Bearer)
  --auth-credentials CREDS   the credentials for that scheme

public-key prints the key that verifies the server's webhook signatures (Standard Webhooks v1a,
Ed25519), as the agent card publishes it: whpk_... (--pem: PEM). Read from --card (or A2A_CARD_URL).`;

async function add(ctx: CommandContext): Promise<void> {
  const taskId = required(ctx, 1, "TASK_ID");
  const url = required(ctx, 2, "URL");
  const scheme = stringOption(ctx.values, "auth-scheme");
  const credentials = stringOption(ctx.values, "auth-credentials");
  if (credentials !== undefined && scheme === undefined) throw new UsageError("--auth-credentials needs --auth-scheme");
  const { client, tenant } = await ctx.connect();
  const config = await client.unary("createTaskPushNotificationConfig", {
    tenant,
    taskId,
    url,
    id: stringOption(ctx.values, "id") ?? "",
    token: stringOption(ctx.values, "notify-token") ?? "",
    ...(scheme !== undefined ? { authentication: { scheme, credentials: credentials ?? "" } } : {}),
  });
  if (ctx.out.json) return ctx.out.data(toJson(TaskPushNotificationConfigSchema, config));
  renderPushConfig(ctx.out, config);
}

async function get(ctx: CommandContext): Promise<void> {
  const taskId = required(ctx, 1, "TASK_ID");
  const id = required(ctx, 2, "CONFIG_ID");
  const { client, tenant } = await ctx.connect();
  const config = await client.unary("getTaskPushNotificationConfig", { tenant, taskId, id });
  if (ctx.out.json) return ctx.out.data(toJson(TaskPushNotificationConfigSchema, config));
  renderPushConfig(ctx.out, config);
}

async function list(ctx: CommandContext): Promise<void> {
  const taskId = required(ctx, 1, "TASK_ID");
  const pageSize = intOption(ctx.values, "limit", 1, 100);
  const { client, tenant } = await ctx.connect();
  const page = await client.unary("listTaskPushNotificationConfigs", {
    tenant,
    taskId,
    pageToken: stringOption(ctx.values, "page") ?? "",
    ...(pageSize !== undefined ? { pageSize } : {}),
  });
  if (ctx.out.json) return ctx.out.data(toJson(ListTaskPushNotificationConfigsResponseSchema, page));
  if (page.configs.length === 0) ctx.out.line(ctx.out.style("dim", `no push configs on task ${taskId}`));
  for (const config of page.configs) renderPushConfig(ctx.out, config);
  if (page.nextPageToken) ctx.out.line(ctx.out.style("dim", `next page: a2a push list ${taskId} --page ${page.nextPageToken}`));
}

async function rm(ctx: CommandContext): Promise<void> {
  const taskId = required(ctx, 1, "TASK_ID");
  const id = required(ctx, 2, "CONFIG_ID");
  const { client, tenant } = await ctx.connect();
  await client.unary("deleteTaskPushNotificationConfig", { tenant, taskId, id });
  if (ctx.out.json) return ctx.out.data({ deleted: { taskId, id } });
  ctx.out.line(`deleted push config ${id} of task ${taskId}`);
}

/** The server's webhook verification key, from the push-signature extension of its public card. */
async function publicKey(ctx: CommandContext): Promise<void> {
  const card = (await fetchCard(
    stringOption(ctx.values, "card") ?? ctx.connection.card ?? DEFAULT_CARD_URL,
    ctx.connection.timeoutMs,
    httpDispatcher(ctx.connection),
  )) as {
    capabilities?: { extensions?: Array<{ uri?: string; params?: Record<string, unknown> }> };
  };
  const params = card.capabilities?.extensions?.find((e) => e.uri === PUSH_SIGNATURE_EXTENSION)?.params;
  if (params === undefined || typeof params.public_key !== "string") {
    throw new UsageError("the server's card publishes no webhook public key: its webhooks are signed with per-tenant HMAC secrets, or not signed");
  }
  if (ctx.out.json) return ctx.out.data(params);
  ctx.out.line(String(ctx.values.pem ? params.public_key_pem : params.public_key).trimEnd());
}

const SUBCOMMANDS: Record<string, (ctx: CommandContext) => Promise<void>> = { add, get, list, rm, "public-key": publicKey };

export const pushCommand: Command = {
  name: "push",
  summary: "manage a task's push notification configs: push add | get | list | rm | public-key",
  help: HELP,
  options: {
    id: { type: "string" },
    "notify-token": { type: "string" },
    "auth-scheme": { type: "string" },
    "auth-credentials": { type: "string" },
    limit: { type: "string" },
    page: { type: "string" },
    card: { type: "string" },
    pem: { type: "boolean" },
  },
  async run(ctx) {
    const sub = ctx.args[0];
    if (!sub) throw new UsageError("missing subcommand: add, get, list, rm or public-key");
    const run = SUBCOMMANDS[sub];
    if (!run) throw new UsageError(`unknown push subcommand "${sub}": use add, get, list, rm or public-key`);
    await run(ctx);
  },
};
