/**
 * Bad input to GetTask, ListTasks, CancelTask and GetExtendedAgentCard, table by table
 * (R-GET-4, R-HIST-4, R-LIST-3/7, A-13, R-CANCEL-4, R-SEC-5), plus request bodies that do not
 * decode and bodies over the size limit, through the real gRPC server. After the tables the
 * server still answers and no task was made or changed.
 */
import * as grpc from "@grpc/grpc-js";
import type { CancelTaskRequest, GetTaskRequest, ListTasksRequest } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config/index.js";
import { startServer } from "../../src/protocol/server.js";
import { a2aStatusMapper } from "../../src/protocol/status-mapper.js";
import { A2AServiceClient } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { captureLogger, unary } from "../foundation/helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { type TaskState, dispatchAgent, expectA2AError, expectBadField, rpc, sendForTask, sendRequest, userMessage } from "./e2e-helpers.js";

let s: A2ATestServer;
const agents = dispatchAgent();
const ASK = agents.on(async (ctx) => (await ctx.working(), ctx.requireInput("waiting")));
let waiting: Awaited<ReturnType<typeof sendForTask>>;
let before: number;

beforeAll(async () => {
  s = await startA2AServer({ agent: agents.agent });
  waiting = await sendForTask(s, userMessage(ASK));
  before = (await rpc(s).list()).response!.totalSize;
});
afterAll(() => s.close());

const LONG = "x".repeat(257);

describe("GetTask", () => {
  const rows: Array<[string, Partial<GetTaskRequest>, string]> = [
    ["id missing", { id: "" }, "id"],
    ["id oversized", { id: LONG }, "id"],
    ["id with a newline", { id: "a\nb" }, "id"],
    ["history_length negative", { id: "t", historyLength: -5 }, "history_length"],
    ["tenant oversized", { id: "t", tenant: LONG }, "tenant"],
    ["tenant with a control char", { id: "t", tenant: "\u001b[31m" }, "tenant"],
  ];
  test.each(rows.map(([w, r, f]) => [w, f, r] as const))("R-GET-4 / R-HIST-4: %s -> INVALID_ARGUMENT on %s", async (_w, field, request) => {
    expectBadField((await rpc(s).get({ id: "", ...request })).error, field);
  });

  test("R-GET-2: an id that refers to nothing is NOT_FOUND / TASK_NOT_FOUND", async () => {
    expectA2AError((await rpc(s).get({ id: "does-not-exist" })).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  });
});

describe("ListTasks", () => {
  const rows: Array<[string, Partial<ListTasksRequest>, string]> = [
    ["page_size 0", { pageSize: 0 }, "page_size"],
    ["page_size 101", { pageSize: 101 }, "page_size"],
    ["page_size negative", { pageSize: -5 }, "page_size"],
    ["history_length negative", { historyLength: -1 }, "history_length"],
    ["status unknown (99)", { status: 99 as TaskState }, "status"],
    ["status negative", { status: -1 as TaskState }, "status"],
    ["context_id oversized", { contextId: LONG }, "context_id"],
    ["context_id with a NUL", { contextId: "c\u0000" }, "context_id"],
    ["tenant oversized", { tenant: LONG }, "tenant"],
    ["status_timestamp_after beyond year 9999", { statusTimestampAfter: { seconds: 253_402_300_800, nanos: 0 } }, "status_timestamp_after.seconds"],
    ["status_timestamp_after before year 1", { statusTimestampAfter: { seconds: -62_135_596_801, nanos: 0 } }, "status_timestamp_after.seconds"],
    ["status_timestamp_after negative nanos", { statusTimestampAfter: { seconds: 0, nanos: -1 } }, "status_timestamp_after.nanos"],
    ["status_timestamp_after nanos of a whole second", { statusTimestampAfter: { seconds: 0, nanos: 1_000_000_000 } }, "status_timestamp_after.nanos"],
    ["page_token not issued by this server", { pageToken: "eyJ4IjoxfQ.c2lnbmF0dXJl" }, "page_token"],
  ];
  test.each(rows.map(([w, r, f]) => [w, f, r] as const))("R-LIST-3 / R-LIST-7 / A-13: %s -> INVALID_ARGUMENT on %s", async (_w, field, request) => {
    expectBadField((await rpc(s).list(request)).error, field);
  });

  test("R-LIST-7: a context id that refers to nothing is an empty page, not an error", async () => {
    expect((await rpc(s).list({ contextId: "no-such-context" })).response).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
  });
});

describe("CancelTask", () => {
  const rows: Array<[string, Partial<CancelTaskRequest>, string]> = [
    ["id missing", { id: "" }, "id"],
    ["id oversized", { id: LONG }, "id"],
    ["id with a control char", { id: "t\u007f" }, "id"],
    ["metadata with NaN", { id: "t", metadata: { n: Number.NaN } }, "metadata"],
    ["tenant oversized", { id: "t", tenant: LONG }, "tenant"],
  ];
  test.each(rows.map(([w, r, f]) => [w, f, r] as const))("R-CANCEL-4: %s -> INVALID_ARGUMENT on %s", async (_w, field, request) => {
    expectBadField((await rpc(s).cancel({ id: "", ...request })).error, field);
  });

  test("R-CANCEL-4: a bad request naming a real task leaves it as it was", async () => {
    expectBadField((await rpc(s).cancel({ id: waiting.id, metadata: { n: Number.NaN } })).error, "metadata");
    expect((await rpc(s).get({ id: waiting.id })).response).toEqual(waiting);
  });

  test("R-CANCEL-4: an id that refers to nothing is NOT_FOUND / TASK_NOT_FOUND", async () => {
    expectA2AError((await rpc(s).cancel({ id: "does-not-exist" })).error, grpc.status.NOT_FOUND, "TASK_NOT_FOUND");
  });
});

describe("GetExtendedAgentCard", () => {
  test("R-SEC-5: an oversized tenant -> INVALID_ARGUMENT on tenant", async () => {
    const { error } = await unary(s.client, s.client.getExtendedAgentCard, { tenant: LONG }, s.metadata());
    expectBadField(error, "tenant");
  });
});

describe("request bodies that do not decode", () => {
  const identity = (b: Buffer) => b;
  const raw = (method: string, body: Buffer) =>
    new Promise<grpc.ServiceError | undefined>((resolve) => {
      const client = new grpc.Client(s.target, grpc.credentials.createInsecure());
      client.makeUnaryRequest(`/lf.a2a.v1.A2AService/${method}`, identity, identity, body, s.metadata(), (error) => {
        client.close();
        resolve(error ?? undefined);
      });
    });

  const bodies: Array<[string, Buffer]> = [
    ["a truncated length-delimited field", Buffer.from([0x0a, 0xff, 0xff])],
    ["random garbage", Buffer.from("this is not protobuf at all \u00ff\u00fe", "latin1")],
    ["a field with an impossible wire type", Buffer.from([0x0f, 0x01])],
  ];
  const methods: Array<[string, string]> = [
    ["SendMessage", "SendMessageRequest"],
    ["GetTask", "GetTaskRequest"],
    ["ListTasks", "ListTasksRequest"],
    ["CancelTask", "CancelTaskRequest"],
    ["GetExtendedAgentCard", "GetExtendedAgentCardRequest"],
  ];
  test.each(methods.flatMap(([m, t]) => bodies.map(([what, body]) => [m, what, t, body] as const)))(
    "R-SEND-8 / R-ERR-5: %s with %s -> INVALID_ARGUMENT naming the message type",
    async (method, _what, type, body) => {
      const error = await raw(method, body);
      expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(error!.details).toBe(`request is not a valid lf.a2a.v1.${type} message`);
    },
  );
});

describe("after the tables", () => {
  test("issue 3: the server still answers, and no refused request made or changed a task", async () => {
    expect((await rpc(s).list()).response!.totalSize).toBe(before);
    expect((await rpc(s).get({ id: waiting.id })).response).toEqual(waiting);
    const done = await sendForTask(s, userMessage(ASK, { taskId: waiting.id }));
    expect(done.id).toBe(waiting.id);
    expect((await rpc(s).list()).response!.totalSize).toBe(before);
  });
});

describe("R-SEC-5: a request over the maximum message size", () => {
  test("R-SEC-5: with A2A_MAX_MESSAGE_BYTES=4096 a bigger SendMessage is RESOURCE_EXHAUSTED, makes no task, and the server goes on", async () => {
    // test/support/a2a-server.ts does not hand maxMessageBytes to startServer, so assemble the service as main.ts does.
    const { logger } = captureLogger("warn");
    const config = loadConfig({
      argv: [],
      env: {
        A2A_LISTEN: "127.0.0.1:0",
        A2A_STORE: "memory",
        A2A_CARD_LISTEN: "off",
        A2A_PUBLIC_GRPC_ADDRESS: "127.0.0.1:50051",
        A2A_MAX_MESSAGE_BYTES: "4096",
      },
    });
    expect(config.maxMessageBytes).toBe(4096);
    const server = await startServer({ listen: config.listen, logger, maxMessageBytes: config.maxMessageBytes });
    const app = await createApp(config, logger, { agent: agents.agent });
    server.onShutdown(() => app.close(0));
    server.useHandlers(app.handlers, a2aStatusMapper);
    const client = new A2AServiceClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const small: A2ATestServer = { ...s, client } as A2ATestServer;
    try {
      const big = await rpc(small).send(sendRequest(userMessage(`${ASK} ${"x".repeat(8 * 1024)}`)));
      expect(big.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(big.error!.details).toMatch(/larger than|max/i);
      expect((await rpc(small).list()).response!.totalSize).toBe(0);
      const ok = await rpc(small).send(sendRequest(userMessage(ASK)));
      expect(ok.error).toBeUndefined();
      expect(ok.response!.payload!.$case).toBe("task");
    } finally {
      client.close();
      await server.shutdown(0);
    }
  });
});
