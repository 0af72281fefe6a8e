/**
 * Bad SendMessage input, field by field (R-SEND-8, R-HIST-4, A-16, R-SEC-5), through the real
 * gRPC server: each row checks the code, the BadRequest field path and that the description
 * says what to send; after the table the server still answers and no task was made or changed.
 */
import * as grpc from "@grpc/grpc-js";
import type { Message, Part, SendMessageRequest } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { Role, TaskState, dispatchAgent, expectA2AError, expectBadField, rpc, sendForTask, sendRequest, userMessage } from "./e2e-helpers.js";

let s: A2ATestServer;
const agents = dispatchAgent();
let agentRuns = 0;
const WORK = agents.on(async (ctx) => {
  agentRuns++;
  if (ctx.task) return (await ctx.working(), ctx.complete());
  await ctx.working();
  await ctx.requireInput("waiting");
});

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent, env: { A2A_PUSH_NOTIFICATIONS: "false" } }); // push off: A-11 below
});
afterAll(() => s.close());

const LONG = "x".repeat(257);
const text = (value: string, extra: Partial<Part> = {}): Part => ({ content: { $case: "text", value }, filename: "", mediaType: "", ...extra });
const withMessage = (extra: Partial<Message>): SendMessageRequest => sendRequest(userMessage(WORK, extra));
const withPart = (part: Partial<Part>): SendMessageRequest => withMessage({ parts: [{ filename: "", mediaType: "", ...part } as Part] });
const withConfig = (config: Parameters<typeof sendRequest>[1]): SendMessageRequest => sendRequest(userMessage(WORK), config);

const pushConfig = (extra: Record<string, unknown>) => ({ tenant: "", id: "", taskId: "", url: "https://client.example/hook", token: "", ...extra });

/** [what is wrong, request, field path]. */
const rows: Array<[string, SendMessageRequest, string]> = [
  ["message missing", sendRequest(undefined), "message"],
  ["message_id empty", withMessage({ messageId: "" }), "message.message_id"],
  ["message_id oversized (257 chars)", withMessage({ messageId: LONG }), "message.message_id"],
  ["message_id with a newline", withMessage({ messageId: "id\nforged log line" }), "message.message_id"],
  ["context_id oversized", withMessage({ contextId: LONG }), "message.context_id"],
  ["context_id with a NUL", withMessage({ contextId: "ctx\u0000" }), "message.context_id"],
  ["task_id oversized", withMessage({ taskId: LONG }), "message.task_id"],
  ["task_id with a control char", withMessage({ taskId: "t\u0007" }), "message.task_id"],
  ["role unspecified", withMessage({ role: Role.ROLE_UNSPECIFIED }), "message.role"],
  ["role agent (A-16)", withMessage({ role: Role.ROLE_AGENT }), "message.role"],
  ["role out of range", withMessage({ role: 42 as Role }), "message.role"],
  ["parts empty", withMessage({ parts: [] }), "message.parts"],
  ["part without content (A-16)", withPart({}), "message.parts[0]"],
  ["url part empty", withPart({ content: { $case: "url", value: "" } }), "message.parts[0].url"],
  ["url part relative", withPart({ content: { $case: "url", value: "report.pdf" } }), "message.parts[0].url"],
  ["data part with no value", withPart({ content: { $case: "data", value: undefined } }), "message.parts[0].data"],
  ["data part with NaN", withPart({ content: { $case: "data", value: { n: Number.NaN } } }), "message.parts[0].data"],
  ["media_type not type/subtype", withPart({ content: { $case: "text", value: "x" }, mediaType: "plain text" }), "message.parts[0].media_type"],
  ["filename oversized (1025)", withPart({ content: { $case: "text", value: "x" }, filename: "f".repeat(1025) }), "message.parts[0].filename"],
  ["filename with a newline", withPart({ content: { $case: "text", value: "x" }, filename: "a\nb.txt" }), "message.parts[0].filename"],
  ["part metadata with Infinity", withPart({ content: { $case: "text", value: "x" }, metadata: { x: Number.POSITIVE_INFINITY } }), "message.parts[0].metadata"],
  ["second part bad", withMessage({ parts: [text("ok"), { filename: "", mediaType: "" } as Part] }), "message.parts[1]"],
  ["message metadata with NaN", withMessage({ metadata: { deep: [1, { n: Number.NaN }] } }), "message.metadata"],
  ["extension uri empty", withMessage({ extensions: [""] }), "message.extensions[0]"],
  ["reference_task_ids with an empty id", withMessage({ referenceTaskIds: ["t-1", ""] }), "message.reference_task_ids[1]"],
  ["reference_task_ids too many (65)", withMessage({ referenceTaskIds: Array.from({ length: 65 }, (_, i) => `t-${i}`) }), "message.reference_task_ids"],
  ["reference_task_id oversized", withMessage({ referenceTaskIds: [LONG] }), "message.reference_task_ids[0]"],
  ["history_length negative", withConfig({ historyLength: -1 }), "configuration.history_length"],
  ["accepted_output_modes not a media type", withConfig({ acceptedOutputModes: ["text/plain", "pdf"] }), "configuration.accepted_output_modes[1]"],
  ["inline push config without url", withConfig({ taskPushNotificationConfig: pushConfig({ url: "" }) }), "configuration.task_push_notification_config.url"],
  [
    "inline push config with ftp url",
    withConfig({ taskPushNotificationConfig: pushConfig({ url: "ftp://x.example/hook" }) }),
    "configuration.task_push_notification_config.url",
  ],
  [
    "inline push config auth without scheme",
    withConfig({ taskPushNotificationConfig: pushConfig({ authentication: { scheme: "", credentials: "c" } }) }),
    "configuration.task_push_notification_config.authentication.scheme",
  ],
  ["request metadata with NaN", { ...sendRequest(userMessage(WORK)), metadata: { n: Number.NaN } }, "metadata"],
  ["tenant oversized", sendRequest(userMessage(WORK), undefined, LONG), "tenant"],
  ["tenant with a newline", sendRequest(userMessage(WORK), undefined, "a\nb"), "tenant"],
];

let before: number;
beforeAll(async () => {
  before = (await rpc(s).list()).response!.totalSize;
});

describe("R-SEND-8: every bad field is INVALID_ARGUMENT with its BadRequest path and what to send", () => {
  test.each(rows.map(([what, request, field]) => [what, field, request] as const))("R-SEND-8: %s -> %s", async (_what, field, request) => {
    const { error } = await rpc(s).send(request);
    expectBadField(error, field);
  });

  test("R-SEND-8: every violation of one request is reported at once", async () => {
    const { error } = await rpc(s).send(withMessage({ messageId: "", role: Role.ROLE_UNSPECIFIED, parts: [] }));
    for (const field of ["message.message_id", "message.role", "message.parts"]) expectBadField(error, field);
  });

  test("R-SEND-8: the same table refused on a follow-up leaves the waiting task exactly as it was", async () => {
    const waiting = await sendForTask(s, userMessage(WORK));
    expect(waiting.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const runs = agentRuns;
    for (const bad of [{ parts: [] }, { role: Role.ROLE_AGENT }, { messageId: "" }, { contextId: "ctx\n" }] as Array<Partial<Message>>) {
      const { error } = await rpc(s).send(sendRequest(userMessage(WORK, { taskId: waiting.id, ...bad })));
      expect(error!.code).toBe(grpc.status.INVALID_ARGUMENT);
    }
    const after = (await rpc(s).get({ id: waiting.id })).response!;
    expect(after).toEqual(waiting);
    expect(agentRuns).toBe(runs);
    before++; // this test made one task on purpose
  });

  test("A-11: a valid inline push config while push is off is FAILED_PRECONDITION / PUSH_NOTIFICATION_NOT_SUPPORTED and makes no task", async () => {
    const { error } = await rpc(s).send(withConfig({ taskPushNotificationConfig: pushConfig({}) }));
    expectA2AError(error, grpc.status.FAILED_PRECONDITION, "PUSH_NOTIFICATION_NOT_SUPPORTED");
  });

  test("R-SEND-8 / issue 3: after the table the server still answers, and no refused request made or ran anything", async () => {
    const runs = agentRuns;
    expect((await rpc(s).list()).response!.totalSize).toBe(before);
    const ok = await sendForTask(s, userMessage(WORK));
    expect(ok.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(agentRuns).toBe(runs + 1);
    expect((await rpc(s).list()).response!.totalSize).toBe(before + 1);
  });
});
