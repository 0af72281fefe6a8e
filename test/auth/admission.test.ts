/**
 * Issue 33, finding 1: with authentication on, a call is admitted from its metadata before its
 * request is decoded (a grpc-js server interceptor), so a caller without credentials costs the
 * server no decoding; the proven caller reaches the handler without a second verification; and
 * an authenticated caller's Structs are bounded (entries, nesting) with a BadRequest naming the path.
 */
import * as grpc from "@grpc/grpc-js";
import { create, toBinary, type JsonObject } from "@bufbuild/protobuf";
import * as http2 from "node:http2";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Role, SendMessageRequestSchema } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { apiKeyLine, CallerAuthenticator, newApiKey, type Authenticator } from "../../src/auth/index.js";
import { RpcScopes } from "../../src/auth/rpc-scopes.js";
import { createA2AHandlers } from "../../src/service/a2a-handlers.js";
import { a2aStatusMapper } from "../../src/protocol/status-mapper.js";
import { BacklogBudget } from "../../src/streams/index.js";
import { expectBadField, rpc, scriptedAgent, sendRequest, userMessage } from "../e2e/e2e-helpers.js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { expectAuthError, withAuth } from "./auth-support.js";

const SEND_PATH = "/lf.a2a.v1.A2AService/SendMessage";
const agent = scriptedAgent(async (ctx) => ctx.complete("done"));
const alice = newApiKey();
let dir: string;
let s: A2ATestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-admission-"));
  const file = join(dir, "keys");
  writeFileSync(file, `${apiKeyLine(alice, { principal: "alice", tenants: undefined, scopes: [] })}\n`);
  s = await startA2AServer({ agent, env: { A2A_AUTH: "api-key", A2A_API_KEYS_FILE: file, A2A_AUTH_FAILURE_RATE: "0" } });
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A SendMessageRequest whose metadata Struct has `entries` entries (60,000 make ~3.6 MB). */
function hugeRequestBytes(entries: number): Buffer {
  const metadata: JsonObject = {};
  for (let i = 0; i < entries; i++) metadata[`k${String(i).padStart(6, "0")}`] = "v".repeat(40);
  const request = create(SendMessageRequestSchema, {
    message: { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text", value: "hi" } }] },
    metadata,
  });
  return Buffer.from(toBinary(SendMessageRequestSchema, request));
}

/** Sends already-encoded bytes (the client does no encoding work in this process). */
function sendRaw(target: string, bytes: Buffer, metadata: grpc.Metadata): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), { "grpc.max_send_message_length": 8 << 20 });
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      SEND_PATH,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      metadata,
      (error) => {
        client.close();
        resolve(error);
      },
    );
  });
}

/**
 * Opens a SendMessage over raw HTTP/2 without credentials, frames the whole message's length but
 * writes only its first `sent` bytes and never ends the stream; resolves with the grpc-status the
 * server answers (or "none" after 10 s).
 */
function sendPartialMessage(target: string, message: Buffer, sent: number): Promise<{ grpcStatus: string }> {
  const session = http2.connect(`http://${target}`);
  const stream = session.request({ ":method": "POST", ":path": SEND_PATH, "content-type": "application/grpc", te: "trailers", "a2a-version": "1.0" });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.byteLength, 1);
  stream.write(Buffer.concat([prefix, message.subarray(0, sent)]));
  return new Promise((resolve) => {
    const done = (grpcStatus: string) => {
      clearTimeout(timer);
      stream.destroy();
      session.destroy();
      resolve({ grpcStatus });
    };
    const timer = setTimeout(() => done("none"), 10_000);
    const statusOf = (headers: http2.IncomingHttpHeaders) => headers["grpc-status"];
    stream.on("response", (headers) => {
      const status = statusOf(headers);
      if (status !== undefined) done(String(status));
    });
    stream.on("trailers", (trailers) => done(String(statusOf(trailers) ?? "none")));
    stream.on("error", () => done("stream error"));
  });
}

describe("admission before decoding (issue 33 #1)", () => {
  test("R-SEC-6: with authentication on, a 60,000-entry SendMessage without credentials is UNAUTHENTICATED and never decoded", async () => {
    let handlerCalls = 0;
    const handlers = s.app.handlers;
    // The adapter decodes a request just before handing it to its handler: a handler call is a decode.
    s.server.useHandlers({ ...handlers, SendMessage: (request, call) => (handlerCalls++, handlers.SendMessage!(request, call)) }, a2aStatusMapper);
    try {
      const bytes = hugeRequestBytes(60_000);
      expect(bytes.byteLength).toBeGreaterThan(3_000_000);
      expectAuthError((await sendRaw(s.target, bytes, withAuth({}))) ?? undefined, grpc.status.UNAUTHENTICATED, "CREDENTIALS_MISSING", /x-api-key/);
      expect(handlerCalls).toBe(0);

      // The refusal comes before the message is read at all: a caller that has sent only the first
      // 64 KiB of its 3.6 MB message (and never sends the rest) already has its answer. A message
      // that has not arrived cannot have been decoded.
      const partial = await sendPartialMessage(s.target, bytes, 64 * 1024);
      expect(partial).toEqual({ grpcStatus: String(grpc.status.UNAUTHENTICATED) });
      expect(handlerCalls).toBe(0);

      // The same call with a key is admitted, decoded and answered.
      const ok = await sendRaw(s.target, hugeRequestBytes(10), withAuth({ "x-api-key": alice }));
      expect(ok).toBeNull();
      expect(handlerCalls).toBe(1);
    } finally {
      s.server.useHandlers(handlers, a2aStatusMapper);
    }
  });

  test("A-15: the version is still checked before the credentials, before decoding", async () => {
    const md = new grpc.Metadata();
    md.set("a2a-version", "9.9");
    const error = await sendRaw(s.target, hugeRequestBytes(10), md);
    expect(error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(error?.details).toMatch(/9\.9/);
  });

  test("a refused call is still reported: its RPC log line says UNAUTHENTICATED", async () => {
    s.lines.length = 0;
    await sendRaw(s.target, hugeRequestBytes(10), withAuth({ "x-api-key": newApiKey() }));
    const line = s.lines.find((l) => l.method === "SendMessage");
    expect(line).toMatchObject({ grpc_status: "UNAUTHENTICATED" });
  });
});

describe("the admitted caller reaches the handler (issue 33 #1)", () => {
  test("the credential is verified once per call, by the admission", async () => {
    let verifications = 0;
    const counting: Authenticator = {
      scheme: "api-key",
      authenticate(source) {
        if (source.metadata.get("x-api-key").length === 0) return undefined;
        verifications++;
        return { scheme: "api-key", principal: "carol", tenants: undefined, scopes: [], claims: {} };
      },
    };
    const handlers = s.app.handlers;
    s.server.useHandlers(
      createA2AHandlers({
        service: s.app.service,
        card: s.app.card,
        extendedCard: undefined,
        allowMissingVersion: false,
        streamLimits: { streamBytes: 1 << 20, streamEntries: 16, entryBytes: 1 << 20, shared: new BacklogBudget(1 << 24) },
        auth: new CallerAuthenticator({ authenticators: [counting], rpcScopes: RpcScopes.NONE }),
      }),
      a2aStatusMapper,
    );
    try {
      const { error } = await rpc(s).send(sendRequest(userMessage("hi")), withAuth({ "x-api-key": "anything" }));
      expect(error).toBeUndefined();
      expect(verifications).toBe(1);
    } finally {
      s.server.useHandlers(handlers, a2aStatusMapper);
    }
  });
});

describe("Struct bounds for authenticated callers (issue 33 #1, R-SEC-5)", () => {
  const key = () => withAuth({ "x-api-key": alice });

  test("R-SEC-5: a metadata Struct over 10,000 entries is INVALID_ARGUMENT naming metadata", async () => {
    const metadata: Record<string, string> = {};
    for (let i = 0; i <= 10_000; i++) metadata[`k${i}`] = "v";
    const { error } = await rpc(s).send({ ...sendRequest(userMessage("hi")), metadata }, key());
    expect(expectBadField(error, "metadata")).toMatch(/at most 10000 entries \(got 10001\)/);
  });

  test("R-SEC-5: a data part nested deeper than 32 levels is INVALID_ARGUMENT naming the path", async () => {
    let deep: unknown = { leaf: true };
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const message = userMessage("hi", { parts: [{ content: { $case: "data", value: deep as never }, filename: "", mediaType: "" }] } as never);
    const { error } = await rpc(s).send(sendRequest(message), key());
    const description = expectBadField(error, `message.parts[0].data${".a".repeat(32)}`);
    expect(description).toMatch(/at most 32 levels/);
  });

  test("R-SEC-5: a message metadata list over 10,000 entries is INVALID_ARGUMENT naming its path", async () => {
    const message = userMessage("hi", { metadata: { tags: Array.from({ length: 10_001 }, () => 1) } } as never);
    const { error } = await rpc(s).send(sendRequest(message), key());
    expectBadField(error, "message.metadata.tags");
  });
});
