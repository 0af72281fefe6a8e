/**
 * Issue 3/4: how the official @a2a-js/sdk client surfaces each of our errors. The SDK reads the
 * google.rpc.ErrorInfo in grpc-status-details-bin and, for a reason it knows, throws its own
 * class (TaskNotFoundError, ...) carrying `reason`, `status` (the gRPC code) and ErrorInfo
 * `metadata`. Anything else (our BadRequest for validation failures) becomes its generic A2AError
 * with `status` and the raw `statusDetailsBin`, which we decode to show the field violations.
 */
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { fromBinary } from "@bufbuild/protobuf";
import type { Task } from "@a2a-js/sdk";
import {
  A2AError,
  ContentTypeNotSupportedError,
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "@a2a-js/sdk/errors";
import { GRPC_STATUS_CODE, GrpcTaskNotFoundError, GrpcVersionNotSupportedError } from "@a2a-js/sdk/errors/grpc";
import { BadRequestSchema } from "../../gen/es/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/es/google/rpc/status_pb.js";
import { rejection, sendRequest, startSdkSetup, userMessage, type SdkSetup } from "./sdk-client.js";

let s: SdkSetup;
beforeAll(async () => {
  s = await startSdkSetup();
});
afterAll(() => s.close());

/** The field violations of the BadRequest detail the SDK leaves in `statusDetailsBin`. */
function fieldViolations(error: Record<string, unknown>): string[] {
  const bin = error["statusDetailsBin"] as Buffer | undefined;
  if (!bin) throw new Error("the SDK error carries no grpc-status-details-bin");
  const status = fromBinary(StatusSchema, bin);
  return status.details.flatMap((d) => anyUnpack(d, BadRequestSchema)?.fieldViolations.map((v) => v.field) ?? []);
}

/** Asserts the SDK's shape of an INVALID_ARGUMENT status and returns the violated fields. */
function expectInvalidArgument(error: Error & Record<string, unknown>): string[] {
  // No ErrorInfo (a validation failure is not an A2A error, R-ERR-5), so no semantic SDK class:
  // the SDK's RequestMalformedError keys on reason INVALID_PARAMS, a JSON-RPC name outside §10.6's table.
  expect(error).toBeInstanceOf(A2AError);
  expect(error).not.toBeInstanceOf(RequestMalformedError);
  expect(error.name).toBe("A2AError");
  expect(error["status"]).toBe(GRPC_STATUS_CODE.INVALID_ARGUMENT);
  return fieldViolations(error);
}

describe("A2A errors (ErrorInfo -> SDK error classes)", () => {
  test("R-GET-2, R-ERR-3, R-ERR-4, A-23: an unknown task is the SDK's TaskNotFoundError with NOT_FOUND and our message", async () => {
    const error = await rejection(s.client.getTask({ tenant: "", id: "no-such-task" }));
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error).toBeInstanceOf(GrpcTaskNotFoundError);
    expect(error.name).toBe("TaskNotFoundError");
    expect(error["reason"]).toBe("TASK_NOT_FOUND");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.NOT_FOUND);
    expect(error["metadata"]).toEqual(expect.objectContaining({ task_id: "no-such-task" }));
    expect(error.message).toContain("no-such-task"); // the server's actionable message reaches the caller (R-ERR-1)
  });

  test("R-SEND-11: a message to an unknown task is TaskNotFoundError", async () => {
    const error = await rejection(s.client.sendMessage(sendRequest("hello", { taskId: "no-such-task" })));
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error["status"]).toBe(GRPC_STATUS_CODE.NOT_FOUND);
  });

  test("R-SEND-10, A-5: a message to a terminal task is UnsupportedOperationError and leaves the task as it was", async () => {
    const done = (await s.client.sendMessage(sendRequest("story"))) as Task;
    const before = await s.client.getTask({ tenant: "", id: done.id });
    const error = await rejection(s.client.sendMessage(sendRequest("again", { taskId: done.id })));
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expect(error["reason"]).toBe("UNSUPPORTED_OPERATION");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
    expect(await s.client.getTask({ tenant: "", id: done.id })).toEqual(before);
  });
});

describe("invalid arguments (BadRequest -> generic SDK A2AError)", () => {
  test("R-SEND-8, A-16: a message without parts is INVALID_ARGUMENT naming message.parts", async () => {
    const request = sendRequest("x");
    const error = await rejection(s.client.sendMessage({ ...request, message: { ...request.message!, parts: [] } }));
    expect(expectInvalidArgument(error)).toEqual(["message.parts"]);
  });

  test("A-6, R-CTX-5: a task_id with another context_id is INVALID_ARGUMENT on message.context_id", async () => {
    const trip = (await s.client.sendMessage(sendRequest("trip"))) as Task;
    const error = await rejection(s.client.sendMessage(sendRequest("Lima", { taskId: trip.id, contextId: "some-other-context" })));
    expect(expectInvalidArgument(error)).toEqual(["message.context_id"]);
  });

  test("R-GET-4, R-HIST-4: GetTask with an empty id or a negative history_length is INVALID_ARGUMENT", async () => {
    expect(expectInvalidArgument(await rejection(s.client.getTask({ tenant: "", id: "" })))).toEqual(["id"]);
    const task = (await s.client.sendMessage(sendRequest("story"))) as Task;
    expect(expectInvalidArgument(await rejection(s.client.getTask({ tenant: "", id: task.id, historyLength: -1 })))).toEqual(["history_length"]);
  });

  test("R-LIST-3, A-13: ListTasks with page_size out of 1..100 or a foreign page token is INVALID_ARGUMENT", async () => {
    const base = { tenant: "", contextId: "", status: 0, pageToken: "", statusTimestampAfter: undefined };
    expect(expectInvalidArgument(await rejection(s.client.listTasks({ ...base, pageSize: 150 })))).toEqual(["page_size"]);
    expect(expectInvalidArgument(await rejection(s.client.listTasks({ ...base, pageSize: 0 })))).toEqual(["page_size"]);
    expect(expectInvalidArgument(await rejection(s.client.listTasks({ ...base, pageToken: "not-ours" })))).toEqual(["page_token"]);
  });
});

describe("protocol version (a2a-version)", () => {
  // The SDK Client always sends A2A-Version from its transport (1.0); only the bare transport
  // lets a test choose the header, so the version cases call the transport directly.
  const getTask = (serviceParameters?: Record<string, string>) =>
    s.client.transport.getTask({ tenant: "", id: "no-such-task" }, serviceParameters ? { serviceParameters } : undefined);

  test("R-VER-1, R-VER-3: the SDK Client's A2A-Version: 1.0 is accepted, and it overrides a caller-supplied version", async () => {
    // TASK_NOT_FOUND, not VERSION_NOT_SUPPORTED: the call got past the version check.
    const error = await rejection(s.client.getTask({ tenant: "", id: "no-such-task" }, { serviceParameters: { "A2A-Version": "0.3" } }));
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });

  test("R-VER-4, A-3, R-VER-7: without the header (read as 0.3) the SDK gets VersionNotSupportedError listing 1.0", async () => {
    const error = await rejection(getTask());
    expect(error).toBeInstanceOf(VersionNotSupportedError);
    expect(error).toBeInstanceOf(GrpcVersionNotSupportedError);
    expect(error["reason"]).toBe("VERSION_NOT_SUPPORTED");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.FAILED_PRECONDITION);
    expect(String((error["metadata"] as Record<string, string>)["supported_versions"])).toContain("1.0");
    expect(error.message).toMatch(/a2a-version/i);
  });

  test.each(["0.3", "2.0"])("R-VER-3: A2A-Version %s is VersionNotSupportedError", async (version) => {
    const error = await rejection(getTask({ "A2A-Version": version }));
    expect(error).toBeInstanceOf(VersionNotSupportedError);
  });

  test("R-VER-5: a patch number plays no role (1.0.7 is served as 1.0)", async () => {
    expect(await rejection(getTask({ "A2A-Version": "1.0.7" }))).toBeInstanceOf(TaskNotFoundError);
  });
});

describe("content types", () => {
  let strict: SdkSetup;
  beforeAll(async () => {
    strict = await startSdkSetup({ card: { acceptedInputMediaTypes: ["text/plain"] } });
  });
  afterAll(() => strict.close());

  test("R-SEND-9: a part of a refused media type is the SDK's ContentTypeNotSupportedError (INVALID_ARGUMENT)", async () => {
    const message = userMessage("a picture");
    message.parts = [{ content: { $case: "raw", value: Buffer.from([0x89, 0x50]) }, metadata: undefined, filename: "x.png", mediaType: "image/png" }];
    const error = await rejection(strict.client.sendMessage({ ...sendRequest("unused"), message }));
    expect(error).toBeInstanceOf(ContentTypeNotSupportedError);
    expect(error["reason"]).toBe("CONTENT_TYPE_NOT_SUPPORTED");
    expect(error["status"]).toBe(GRPC_STATUS_CODE.INVALID_ARGUMENT);
  });
});
