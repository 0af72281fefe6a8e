/**
 * The official @a2a-js/sdk client against our server with authentication on: it
 * discovers the card (which declares the scheme), sends its credential as a service parameter,
 * and gets the A2A answers; without one it gets UNAUTHENTICATED, without a mapped scope
 * PERMISSION_DENIED. Two principals drive the RPCs both ways (A-31: another's task is
 * TASK_NOT_FOUND), a principal over its rate gets RESOURCE_EXHAUSTED with RetryInfo, and a
 * status that would echo unbounded input comes back bounded.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { TaskState, type Task } from "@a2a-js/sdk";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import { GRPC_STATUS_CODE } from "@a2a-js/sdk/errors/grpc";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../../gen/es/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/es/google/rpc/status_pb.js";
import { apiKeyLine, newApiKey } from "../../src/auth/index.js";
import { makeIssuer, type TestIssuer } from "../auth/auth-support.js";
import { collect, rejection, sendRequest, startSdkSetup, userMessage, type SdkSetup } from "./sdk-client.js";

let issuer: TestIssuer;
let setup: SdkSetup;
beforeAll(async () => {
  issuer = await makeIssuer("ES256");
  setup = await startSdkSetup({ env: issuer.env({ A2A_AUTH_SCOPES: "CancelTask=tasks.cancel" }) });
  setup.scripts.set("ask", async (ctx) => {
    await ctx.working();
    await ctx.requireInput("more?");
  });
});
afterAll(async () => {
  await setup.close();
  issuer.remove();
});

test("A-30 R-CARD-8: the card the SDK discovers declares the bearer JWT scheme", async () => {
  const card = await setup.client.getAgentCard();
  expect(card.securitySchemes["bearer"]?.scheme).toMatchObject({ $case: "httpAuthSecurityScheme", value: { scheme: "Bearer", bearerFormat: "JWT" } });
  expect(card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual([["bearer"]]);
});

test("A-30: the SDK client with a token gets its task, and its own task back from GetTask", async () => {
  const token = await issuer.token({ sub: "sdk-user" });
  const options = { serviceParameters: { authorization: `Bearer ${token}` } };
  const result = await setup.client.sendMessage(sendRequest("story"), options);
  expect("status" in result).toBe(true);
  const task = result as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  const again = await setup.client.getTask({ tenant: "", id: task.id }, options);
  expect(again.id).toBe(task.id);
});

test("A-30: the SDK client without a token is refused with UNAUTHENTICATED", async () => {
  const error = await rejection(setup.client.sendMessage(sendRequest("hello sdk")));
  expect(String(error.message)).toMatch(/authentication|UNAUTHENTICATED|authorization: Bearer/i);
});

/** The google.rpc.Status details the SDK leaves on its error as `statusDetailsBin`. */
function details(error: Record<string, unknown>) {
  const bin = error["statusDetailsBin"] as Buffer | undefined;
  if (!bin) throw new Error("the SDK error carries no grpc-status-details-bin");
  const status = fromBinary(StatusSchema, bin);
  const one = <T>(schema: Parameters<typeof anyUnpack>[1]) => status.details.map((d) => anyUnpack(d, schema)).find((x) => x !== undefined) as T | undefined;
  return {
    info: one<{ reason: string; domain: string }>(ErrorInfoSchema),
    retry: one<{ retryDelay?: { seconds: bigint; nanos: number } }>(RetryInfoSchema),
    badRequest: one<{ fieldViolations: Array<{ field: string }> }>(BadRequestSchema),
  };
}

describe("through the SDK with tokens of two principals", () => {
  const as = async (sub: string, scope = "") => ({ serviceParameters: { authorization: `Bearer ${await issuer.token({ sub, scope })}` } });

  test("A-31: every task RPC on another principal's task is TASK_NOT_FOUND, both ways; each sees its own", async () => {
    const alice = await as("alice", "tasks.cancel");
    const bob = await as("bob", "tasks.cancel");
    const aliceTask = (await setup.client.sendMessage(sendRequest("ask"), alice)) as Task;
    const bobTask = (await setup.client.sendMessage(sendRequest("ask"), bob)) as Task;
    expect([aliceTask.status?.state, bobTask.status?.state]).toEqual([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_INPUT_REQUIRED]);
    for (const [other, task] of [
      [bob, aliceTask],
      [alice, bobTask],
    ] as const) {
      const refusals = [
        await rejection(setup.client.getTask({ tenant: "", id: task.id }, other)),
        await rejection(setup.client.cancelTask({ tenant: "", id: task.id, metadata: undefined }, other)),
        await rejection(setup.client.sendMessage({ ...sendRequest("more"), message: userMessage("more", { taskId: task.id }) }, other)),
        await rejection(collect(setup.client.resubscribeTask({ tenant: "", id: task.id }, other))),
        await rejection(setup.client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "none" }, other)),
      ];
      for (const error of refusals) expect(error).toBeInstanceOf(TaskNotFoundError);
      const listed = await setup.client.listTasks(
        { tenant: "", contextId: "", status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", pageSize: 100, statusTimestampAfter: undefined },
        other,
      );
      expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
    }
    // Each principal still reaches its own task.
    expect((await setup.client.getTask({ tenant: "", id: aliceTask.id }, alice)).id).toBe(aliceTask.id);
    expect((await setup.client.cancelTask({ tenant: "", id: bobTask.id, metadata: undefined }, bob)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  test("A-15: a valid token without the scope the operator mapped to CancelTask is PERMISSION_DENIED / SCOPE_MISSING", async () => {
    const noScope = await as("carol");
    const task = (await setup.client.sendMessage(sendRequest("ask"), noScope)) as Task;
    const error = await rejection(setup.client.cancelTask({ tenant: "", id: task.id, metadata: undefined }, noScope));
    expect(error["status"]).toBe(GRPC_STATUS_CODE.PERMISSION_DENIED);
    expect(details(error).info).toMatchObject({ reason: "SCOPE_MISSING", domain: "auth.a2a-grpc-server" });
    expect(error.message).toMatch(/CancelTask needs the scope\(s\) tasks\.cancel/);
  });

  test("A-34: 10,000 empty parts from a valid caller are INVALID_ARGUMENT with at most 32 violations, received whole", async () => {
    const request = sendRequest("x");
    const parts = Array.from({ length: 10_000 }, () => ({ ...request.message!.parts[0]!, content: undefined }));
    const error = await rejection(setup.client.sendMessage({ ...request, message: { ...request.message!, parts } }, await as("alice")));
    expect(error["status"]).toBe(GRPC_STATUS_CODE.INVALID_ARGUMENT);
    const violations = details(error).badRequest?.fieldViolations ?? [];
    expect(violations.length).toBeGreaterThan(0);
    expect(violations.length).toBeLessThanOrEqual(32);
  });
});

describe("through the SDK with an API key, over a tight request rate", () => {
  let limited: SdkSetup;
  let dir: string;
  const key = newApiKey();
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "a2a-sdk-keys-"));
    writeFileSync(join(dir, "keys"), `${apiKeyLine(key, { principal: "dana", tenants: undefined, scopes: [] })}\n`);
    limited = await startSdkSetup({ env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: join(dir, "keys"), A2A_LIMIT_RATE: "1", A2A_LIMIT_BURST: "2" } });
  });
  afterAll(async () => {
    await limited.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("A-30: the card declares the API key scheme; the key is accepted; over the rate is RESOURCE_EXHAUSTED with RetryInfo", async () => {
    const card = await limited.client.getAgentCard();
    expect(Object.keys(card.securitySchemes)).toEqual(["apiKey"]);
    const withKey = { serviceParameters: { "x-api-key": key } };
    const answers = await Promise.allSettled([0, 1, 2, 3].map(() => limited.client.getTask({ tenant: "", id: "no-such-task" }, withKey)));
    const errors = answers.map((a) => (a.status === "rejected" ? (a.reason as Error & Record<string, unknown>) : undefined));
    // The burst of 2 gets through to our lookup (TASK_NOT_FOUND); the rest are refused by the rate.
    expect(errors.filter((e) => e instanceof TaskNotFoundError).length).toBe(2);
    const limitedOnes = errors.filter((e) => e?.["status"] === GRPC_STATUS_CODE.RESOURCE_EXHAUSTED);
    expect(limitedOnes.length).toBe(2);
    for (const e of limitedOnes) {
      const { info, retry } = details(e!);
      expect(info).toMatchObject({ reason: "RATE_LIMITED", domain: "limits.a2a-grpc-server" });
      expect(retry?.retryDelay).toBeDefined();
    }
  });
});
