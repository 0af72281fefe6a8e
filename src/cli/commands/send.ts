import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Role, SendMessageResponseSchema, type PartSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SendMessageRequestSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { stringOption, type Command, type CommandContext } from "../command.js";
import { UsageError } from "../exit-codes.js";
import { renderMessage, renderTask } from "../render.js";
import { showStream } from "../stream-view.js";

/** Media types of the files people send most; anything else goes as application/octet-stream. */
const MEDIA_TYPES: Record<string, string> = {
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".csv": "text/csv",
  ".html": "text/html",
  ".json": "application/json",
  ".pdf": "application/pdf",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".wav": "audio/wav",
  ".mp3": "audio/mpeg",
  ".zip": "application/zip",
};

type PartInit = MessageInitShape<typeof PartSchema>;

function parts(ctx: CommandContext): PartInit[] {
  const out: PartInit[] = [];
  const text = ctx.args.join(" ");
  if (text) out.push({ content: { case: "text", value: text } });
  for (const raw of (ctx.values.data as string[] | undefined) ?? []) {
    let value: JsonValue;
    try {
      value = JSON.parse(raw) as JsonValue;
    } catch (e) {
      throw new UsageError(`--data is not JSON: ${(e as Error).message}`);
    }
    out.push({ content: { case: "data", value: fromJson(ValueSchema, value) }, mediaType: "application/json" });
  }
  for (const path of (ctx.values.file as string[] | undefined) ?? []) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (e) {
      throw new UsageError(`cannot read --file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    out.push({
      content: { case: "raw", value: bytes },
      filename: basename(path),
      mediaType: MEDIA_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream",
    });
  }
  if (out.length === 0) throw new UsageError("nothing to send: give TEXT, --data or --file");
  return out;
}

export const sendCommand: Command = {
  name: "send",
  summary: "send a message; waits for the answer (--stream: live, --no-wait: return the task at once)",
  help: `Usage: a2a send [TEXT...] [options]

Sends one user message. By default waits until the task is done or needs input, then
prints the answer (a message, or the task with its artifacts).

  --stream            show the task live (SendStreamingMessage); Ctrl-C stops watching, not the task
  --no-wait           return as soon as the task exists (return_immediately)
  --task ID           continue this task (an answer to INPUT_REQUIRED, ...)
  --context ID        the conversation to send in
  --data JSON         add a data part (repeatable)
  --file PATH         add a file part, sent inline (repeatable)
  --history N         include up to N history messages in the answer
  -q, --quiet         print only the task id (nothing for a message reply): TASK=$(a2a send ... -q)`,
  options: {
    stream: { type: "boolean" },
    "no-wait": { type: "boolean" },
    task: { type: "string" },
    context: { type: "string" },
    data: { type: "string", multiple: true },
    file: { type: "string", multiple: true },
    history: { type: "string" },
    quiet: { type: "boolean", short: "q" },
  },
  async run(ctx) {
    const messageParts = parts(ctx);
    if (ctx.values.stream && ctx.values["no-wait"]) throw new UsageError("--stream and --no-wait exclude each other");
    if (ctx.values.stream && ctx.values.quiet) throw new UsageError("--stream and --quiet exclude each other");
    const history = stringOption(ctx.values, "history");
    if (history !== undefined && !/^\d+$/.test(history)) throw new UsageError(`--history must be a number, got "${history}"`);
    const { client, tenant } = await ctx.connect();
    const request = {
      tenant,
      message: {
        messageId: randomUUID(),
        role: Role.USER,
        parts: messageParts,
        taskId: stringOption(ctx.values, "task") ?? "",
        contextId: stringOption(ctx.values, "context") ?? "",
      },
      configuration: {
        returnImmediately: Boolean(ctx.values["no-wait"]),
        ...(history !== undefined ? { historyLength: Number(history) } : {}),
      },
    } satisfies MessageInitShape<typeof SendMessageRequestSchema>;
    if (ctx.values.stream) return showStream(ctx, client.stream("sendStreamingMessage", request), "streaming");

    ctx.out.spin(ctx.values["no-wait"] ? "sending…" : "waiting for the agent…");
    let response;
    try {
      response = await client.unary("sendMessage", request);
    } finally {
      ctx.out.stopSpinner();
    }
    const p = response.payload;
    if (ctx.values.quiet) {
      if (p.case === "task") ctx.io.stdout.write(`${p.value.id}\n`);
      return;
    }
    if (ctx.out.json) return ctx.out.data(toJson(SendMessageResponseSchema, response));
    if (p.case === "message") renderMessage(ctx.out, p.value);
    else if (p.case === "task") renderTask(ctx.out, p.value);
    else ctx.out.note("the server answered with neither a task nor a message");
  },
};
