/**
 * R-ERR-*: the grpc-status-details-bin trailer is decoded with the independent ts-proto codec,
 * so these tests prove the bytes are a standard google.rpc.Status, not just what our codec reads back.
 */
import * as grpc from "@grpc/grpc-js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import { BadRequest, ErrorInfo, RequestInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import type { Any } from "../../gen/ts-proto/google/protobuf/any.js";
import {
  type A2AError,
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  InvalidRequestError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "../../src/lifecycle/model/errors.js";
import { GrpcStatusError } from "../../src/service/error-status.js";
import { STATUS_DETAILS_KEY, toGrpcStatus } from "../../src/protocol/grpc-status.js";

const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";
const REQUEST_INFO = "type.googleapis.com/google.rpc.RequestInfo";

function noLog(): never {
  throw new Error("log must not be called for a known error");
}

function decodeTrailer(metadata: grpc.Metadata): Status {
  const values = metadata.get(STATUS_DETAILS_KEY);
  expect(values).toHaveLength(1);
  expect(Buffer.isBuffer(values[0])).toBe(true);
  return Status.decode(values[0] as Buffer);
}

function detail(status: Status, typeUrl: string): Any {
  const found = status.details.filter((d) => d.typeUrl === typeUrl);
  expect(found).toHaveLength(1);
  return found[0]!;
}

// R-ERR-4's table, one row per A2A error class.
const table: Array<[string, A2AError, grpc.status, string, Record<string, string>]> = [
  ["TaskNotFoundError", new TaskNotFoundError("t-1"), grpc.status.NOT_FOUND, "TASK_NOT_FOUND", { task_id: "t-1" }],
  [
    "TaskNotCancelableError",
    new TaskNotCancelableError("t-2", "TASK_STATE_COMPLETED"),
    grpc.status.FAILED_PRECONDITION,
    "TASK_NOT_CANCELABLE",
    { task_id: "t-2", state: "TASK_STATE_COMPLETED" },
  ],
  ["PushNotificationNotSupportedError", new PushNotificationNotSupportedError(), grpc.status.FAILED_PRECONDITION, "PUSH_NOTIFICATION_NOT_SUPPORTED", {}],
  [
    "UnsupportedOperationError",
    new UnsupportedOperationError("task t-3 is completed; send a new message without task_id", { task_id: "t-3" }),
    grpc.status.FAILED_PRECONDITION,
    "UNSUPPORTED_OPERATION",
    { task_id: "t-3" },
  ],
  [
    "ContentTypeNotSupportedError",
    new ContentTypeNotSupportedError("image/png", "message.parts[0].media_type", ["text/plain", "application/json"]),
    grpc.status.INVALID_ARGUMENT,
    "CONTENT_TYPE_NOT_SUPPORTED",
    { media_type: "image/png", field: "message.parts[0].media_type", accepted_media_types: "text/plain,application/json" },
  ],
  [
    "InvalidAgentResponseError",
    new InvalidAgentResponseError("the agent emitted an artifact without parts"),
    grpc.status.INTERNAL,
    "INVALID_AGENT_RESPONSE",
    {},
  ],
  ["ExtendedAgentCardNotConfiguredError", new ExtendedAgentCardNotConfiguredError(), grpc.status.FAILED_PRECONDITION, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", {}],
  [
    "ExtensionSupportRequiredError",
    new ExtensionSupportRequiredError(["https://ext.example/a/v1", "https://ext.example/b/v1"]),
    grpc.status.FAILED_PRECONDITION,
    "EXTENSION_SUPPORT_REQUIRED",
    { required_extensions: "https://ext.example/a/v1,https://ext.example/b/v1" },
  ],
  [
    "VersionNotSupportedError",
    new VersionNotSupportedError("", ["1.0"]),
    grpc.status.FAILED_PRECONDITION,
    "VERSION_NOT_SUPPORTED",
    { requested_version: "", supported_versions: "1.0" },
  ],
];

describe("toGrpcStatus: A2A errors", () => {
  test.each(table)("R-ERR-4 / R-ERR-3 / A-23: %s maps to its code, reason, domain and snake_case metadata", (_name, error, code, reason, metadata) => {
    const result = toGrpcStatus(error, noLog);
    expect(result.code).toBe(code);
    expect(result.details).toBe(error.message);

    // R-ERR-2: the trailer is a google.rpc.Status with the same code and message.
    const status = decodeTrailer(result.metadata);
    expect(status.code).toBe(code);
    expect(status.message).toBe(error.message);

    // R-ERR-6: the first detail is a typed ErrorInfo.
    expect(status.details[0]!.typeUrl).toBe(ERROR_INFO);
    const info = ErrorInfo.decode(detail(status, ERROR_INFO).value);
    expect(info.reason).toBe(reason);
    expect(info.domain).toBe("a2a-protocol.org");
    expect(info.metadata).toEqual(metadata);
    for (const key of Object.keys(info.metadata)) expect(key).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  test("R-ERR-3: every reason is the class name in UPPER_SNAKE_CASE minus Error", () => {
    for (const [name, error] of table) {
      const expected = name
        .replace(/Error$/, "")
        .replace(/([a-z])([A-Z])/g, "$1_$2")
        .toUpperCase();
      const info = ErrorInfo.decode(detail(decodeTrailer(toGrpcStatus(error, noLog).metadata), ERROR_INFO).value);
      expect(info.reason).toBe(expected);
    }
  });

  test("R-SEND-9: ContentTypeNotSupportedError also names its field in a BadRequest violation", () => {
    const error = new ContentTypeNotSupportedError("image/png", "message.parts[1].media_type", ["text/plain"]);
    const status = decodeTrailer(toGrpcStatus(error, noLog).metadata);
    const bad = BadRequest.decode(detail(status, BAD_REQUEST).value);
    expect(bad.fieldViolations).toEqual([expect.objectContaining({ field: "message.parts[1].media_type", description: error.message })]);
  });

  test("R-VER-7: the version error lists the supported versions and the header to send", () => {
    const error = new VersionNotSupportedError("0.3", ["1.0"]);
    const result = toGrpcStatus(error, noLog);
    expect(result.details).toContain("a2a-version: 1.0");
    const info = ErrorInfo.decode(detail(decodeTrailer(result.metadata), ERROR_INFO).value);
    expect(info.metadata.supported_versions).toBe("1.0");
  });
});

describe("toGrpcStatus: request validation", () => {
  test("R-SEND-8 / R-ERR-5: InvalidRequestError is INVALID_ARGUMENT with every violation in a BadRequest", () => {
    const error = new InvalidRequestError([
      { field: "message.message_id", description: "must be set: the unique id of this message" },
      { field: "message.parts", description: "must contain at least one part" },
    ]);
    const result = toGrpcStatus(error, noLog);
    expect(result.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(result.details).toBe(error.message);
    const status = decodeTrailer(result.metadata);
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.message).toBe(error.message);
    expect(status.details.map((d) => d.typeUrl)).toEqual([BAD_REQUEST]);
    const bad = BadRequest.decode(status.details[0]!.value);
    expect(bad.fieldViolations.map((v) => [v.field, v.description])).toEqual([
      ["message.message_id", "must be set: the unique id of this message"],
      ["message.parts", "must contain at least one part"],
    ]);
  });
});

describe("toGrpcStatus: unexpected errors", () => {
  test.each<[string, unknown]>([
    ["an Error", new Error("SQLITE_CORRUPT: /var/lib/secret/path.db")],
    ["a thrown string", "boom /etc/passwd"],
    ["undefined", undefined],
    ["a library error with a numeric code", Object.assign(new Error("secret detail"), { code: 5 })],
  ])("R-ERR-5: %s becomes INTERNAL with a correlation id, logged, and nothing leaked", (_label, thrown) => {
    const logged: Array<[string, unknown]> = [];
    const result = toGrpcStatus(thrown, (id, err) => logged.push([id, err]));
    expect(result.code).toBe(grpc.status.INTERNAL);
    expect(logged).toHaveLength(1);
    const [id, original] = logged[0]!;
    expect(original).toBe(thrown);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.details).toBe(`internal error (correlation id ${id})`);

    const status = decodeTrailer(result.metadata);
    expect(status.code).toBe(grpc.status.INTERNAL);
    expect(status.message).toBe(result.details);
    expect(status.details.map((d) => d.typeUrl)).toEqual([REQUEST_INFO]);
    expect(RequestInfo.decode(status.details[0]!.value).requestId).toBe(id);

    const everything = JSON.stringify(result) + Buffer.from(result.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer).toString("latin1");
    for (const secret of ["SQLITE", "/var/lib", "/etc/passwd", "secret detail", "    at "]) {
      expect(everything).not.toContain(secret);
    }
  });

  test("R-ERR-5: each unexpected error gets a fresh correlation id", () => {
    const ids: string[] = [];
    toGrpcStatus(new Error("a"), (id) => ids.push(id));
    toGrpcStatus(new Error("b"), (id) => ids.push(id));
    expect(ids[0]).not.toBe(ids[1]);
  });
});

describe("toGrpcStatus: statuses the edge decides itself", () => {
  test("R-ERR-5: a GrpcStatusError passes through with its own code and message", () => {
    const result = toGrpcStatus(new GrpcStatusError(grpc.status.UNAUTHENTICATED, "send a bearer token (scheme: bearer)"), noLog);
    expect(result.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(result.details).toBe("send a bearer token (scheme: bearer)");
    const status = decodeTrailer(result.metadata);
    expect(status).toEqual({ code: grpc.status.UNAUTHENTICATED, message: result.details, details: [] });
  });
});
