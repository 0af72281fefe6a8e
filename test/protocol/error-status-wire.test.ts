/**
 * R-ERR-2 over a real loopback call: what toGrpcStatus returns, handed to a grpc-js callback,
 * reaches a client as code + message + a grpc-status-details-bin trailer that the independent
 * ts-proto codec decodes. (Uses a bare byte-echo method, so it does not depend on the adapter.)
 */
import * as grpc from "@grpc/grpc-js";
import { Status } from "../../gen/ts-proto/google/rpc/status.js";
import { BadRequest, ErrorInfo } from "../../gen/ts-proto/google/rpc/error_details.js";
import { InvalidRequestError, TaskNotFoundError } from "../../src/lifecycle/model/errors.js";
import { STATUS_DETAILS_KEY, toGrpcStatus } from "../../src/protocol/grpc-status.js";

const bytes = {
  serialize: (b: Buffer) => b,
  deserialize: (b: Buffer) => b,
};
const definition: grpc.ServiceDefinition = {
  fail: {
    path: "/test.Errors/Fail",
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes.serialize,
    requestDeserialize: bytes.deserialize,
    responseSerialize: bytes.serialize,
    responseDeserialize: bytes.deserialize,
  },
};

let server: grpc.Server;
let client: grpc.Client;
let nextError: unknown;

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(definition, {
    fail: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      callback(toGrpcStatus(nextError, () => {}));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

function call(): Promise<grpc.ServiceError> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest("/test.Errors/Fail", bytes.serialize, bytes.deserialize, Buffer.alloc(0), (err) =>
      err ? resolve(err) : reject(new Error("expected an error")),
    );
  });
}

test("R-ERR-2 / R-ERR-3: an A2A error arrives with its code, message and ErrorInfo trailer", async () => {
  nextError = new TaskNotFoundError("t-404");
  const err = await call();
  expect(err.code).toBe(grpc.status.NOT_FOUND);
  expect(err.details).toBe((nextError as Error).message);
  const status = Status.decode(err.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer);
  expect(status.code).toBe(grpc.status.NOT_FOUND);
  const info = ErrorInfo.decode(status.details[0]!.value);
  expect(info).toEqual({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { task_id: "t-404" } });
});

test("R-SEND-8: validation failures arrive as INVALID_ARGUMENT with a BadRequest trailer", async () => {
  nextError = InvalidRequestError.field("message.role", "must be ROLE_USER");
  const err = await call();
  expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
  const status = Status.decode(err.metadata.get(STATUS_DETAILS_KEY)[0] as Buffer);
  expect(status.details[0]!.typeUrl).toBe("type.googleapis.com/google.rpc.BadRequest");
  expect(BadRequest.decode(status.details[0]!.value).fieldViolations[0]).toMatchObject({
    field: "message.role",
    description: "must be ROLE_USER",
  });
});
