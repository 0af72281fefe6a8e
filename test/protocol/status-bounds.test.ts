/**
 * no status echoes unbounded input. A status travels in the HTTP/2 trailers; one larger
 * than the peer accepts never arrives and stalls the connection, so each must stay small.
 */
import * as grpc from "@grpc/grpc-js";
import { Role } from "../../gen/ts-proto/lf/a2a/v1/a2a.js";
import { boundText, boundViolations } from "../../src/service/status-bounds.js";
import { expectA2AError, rpc, sendRequest, statusDetails, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { bareMetadata } from "../e2e/e2e-helpers.js";

let s: A2ATestServer;
beforeAll(async () => (s = await startA2AServer()));
afterAll(() => s.close());

const trailerBytes = (error: grpc.ServiceError) => Buffer.byteLength(error.details) + (error.metadata.get("grpc-status-details-bin")[0] as Buffer).length;

test("A-34: a 60 KiB a2a-version is answered VERSION_NOT_SUPPORTED with a bounded status, and the connection goes on", async () => {
  const { error } = await rpc(s).send(sendRequest(userMessage("hi")), bareMetadata({ "a2a-version": "9".repeat(60 * 1024) }));
  const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
  expect(Buffer.byteLength(error!.details)).toBeLessThanOrEqual(1024);
  expect(info.metadata["requested_version"]!.length).toBeLessThanOrEqual(256);
  expect(trailerBytes(error!)).toBeLessThan(4096);
  expect((await rpc(s).list({})).error).toBeUndefined(); // same client, same connection
});

test("A-34: 10,000 empty parts give a BadRequest of at most 32 violations, the last saying how many more", async () => {
  const message = userMessage("hi", {
    parts: Array.from({ length: 10_000 }, () => ({ content: undefined, filename: "", mediaType: "" })),
    role: Role.ROLE_USER,
  });
  const { error } = await rpc(s).send(sendRequest(message));
  expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  const violations = statusDetails(error!).badRequest!.fieldViolations;
  expect(violations.length).toBeLessThanOrEqual(32);
  expect(violations.at(-1)!.description).toMatch(/and 99\d\d more violations/);
  expect(Buffer.byteLength(error!.details)).toBeLessThanOrEqual(1024);
  expect(trailerBytes(error!)).toBeLessThan(8192);
  expect((await rpc(s).list({})).error).toBeUndefined();
});

test("A-34: the bounds themselves: UTF-8 cut on a character boundary, violations within 32 and the byte budget", () => {
  const cut = boundText("é".repeat(2000), 1024);
  expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(1024);
  expect(cut.endsWith("…")).toBe(true);
  expect(boundText("short", 1024)).toBe("short");
  const many = boundViolations(Array.from({ length: 100 }, (_, i) => ({ field: `f${i}`.repeat(200), description: "x".repeat(5000) })));
  expect(many.length).toBeLessThanOrEqual(32);
  expect(many.reduce((n, v) => n + v.field.length + v.description.length, 0)).toBeLessThan(4096);
  expect(many.at(-1)!.description).toMatch(/more violations/);
});
