/**
 * Service parameters (R-VER, R-EXT, A-3, A-15) through the real gRPC server: the a2a-version
 * header on every lifecycle RPC, the operator option for a missing header, required and
 * activated extensions.
 */
import * as grpc from "@grpc/grpc-js";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { bareMetadata, dispatchAgent, expectA2AError, rpc, sendForTask, sendRequest, userMessage } from "./e2e-helpers.js";

const REQUIRED = "https://ext.example/required/v1";
const OPTIONAL = "https://ext.example/optional/v1";

let s: A2ATestServer;
let lenient: A2ATestServer;
let extended: A2ATestServer;
const plain = dispatchAgent();
const OK = plain.on(async (ctx) => ctx.reply("ok"));
const WORK = plain.on(async (ctx) => (await ctx.working(), ctx.complete()));
const withExt = dispatchAgent({
  extensions: [
    { uri: REQUIRED, required: true, description: "", params: undefined },
    { uri: OPTIONAL, required: false, description: "adds citations", params: undefined },
  ] as never,
});
let seenRequested: readonly string[] = [];
const ACTIVATE = withExt.on(async (ctx) => {
  seenRequested = ctx.requestedExtensions;
  if (ctx.requestedExtensions.includes(OPTIONAL)) ctx.activateExtension(OPTIONAL);
  ctx.activateExtension(REQUIRED);
  await ctx.reply("used");
});
const TASK = withExt.on(async (ctx) => {
  ctx.activateExtension(OPTIONAL);
  await ctx.working();
  await ctx.complete();
});

beforeAll(async () => {
  s = await startA2AServer({ agent: plain.agent });
  lenient = await startA2AServer({ agent: plain.agent, env: { A2A_ALLOW_MISSING_VERSION: "true" } });
  extended = await startA2AServer({ agent: withExt.agent });
});
afterAll(async () => {
  await s.close();
  await lenient.close();
  await extended.close();
});

const md = (entries: Record<string, string>) => bareMetadata(entries);

describe("a2a-version (R-VER, A-3)", () => {
  test("R-VER-3: the task-creating control case: with a2a-version 1.0 the same request makes a task", async () => {
    const before = (await rpc(s).list()).response!.totalSize;
    await sendForTask(s, userMessage(WORK));
    expect((await rpc(s).list()).response!.totalSize).toBe(before + 1);
  });

  test("A-3 / R-VER-4: a missing a2a-version is FAILED_PRECONDITION / VERSION_NOT_SUPPORTED on every lifecycle RPC, with supported_versions and the header to send", async () => {
    const existing = await sendForTask(s, userMessage(WORK));
    const calls = [
      rpc(s).send(sendRequest(userMessage(OK)), bareMetadata()),
      rpc(s).get({ id: existing.id }, bareMetadata()),
      rpc(s).list({}, bareMetadata()),
      rpc(s).cancel({ id: existing.id }, bareMetadata()),
    ];
    for (const { error } of await Promise.all(calls)) {
      const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
      expect(info.metadata["supported_versions"]).toBe("1.0");
      expect(error!.details).toContain("a2a-version: 1.0");
    }
  });

  test("A-15: the version is checked before the request is validated", async () => {
    const { error } = await rpc(s).send(sendRequest(undefined), bareMetadata());
    expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
  });

  test.each(["1.0", "1.0.7", "1.0, 0.3", "0.3,1.0"])("R-VER-3 / R-VER-5: a2a-version %j is served (patch ignored, lists accepted)", async (version) => {
    const { response, error } = await rpc(s).send(sendRequest(userMessage(OK)), md({ "a2a-version": version }));
    expect(error).toBeUndefined();
    expect(response!.payload!.$case).toBe("message");
  });

  test("R-VER-2: repeated a2a-version entries are read like a list", async () => {
    const metadata = md({ "a2a-version": "0.3" });
    metadata.add("a2a-version", "1.0");
    expect((await rpc(s).send(sendRequest(userMessage(OK)), metadata)).error).toBeUndefined();
  });

  test.each(["0.3", "2.0", "1.1", "banana", "1"])(
    "R-VER-3: a2a-version %j is FAILED_PRECONDITION / VERSION_NOT_SUPPORTED and makes no task",
    async (version) => {
      const before = (await rpc(s).list()).response!.totalSize;
      const { error } = await rpc(s).send(sendRequest(userMessage(WORK)), md({ "a2a-version": version }));
      const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "VERSION_NOT_SUPPORTED");
      expect(info.metadata).toMatchObject({ requested_version: version, supported_versions: "1.0" });
      expect((await rpc(s).list()).response!.totalSize).toBe(before);
    },
  );

  test("A-3: with A2A_ALLOW_MISSING_VERSION=true a missing header is read as 1.0; an unsupported one is still refused", async () => {
    expect((await rpc(lenient).send(sendRequest(userMessage(OK)), bareMetadata())).response!.payload!.$case).toBe("message");
    expect((await rpc(lenient).list({}, bareMetadata())).error).toBeUndefined();
    expectA2AError(
      (await rpc(lenient).send(sendRequest(userMessage(OK)), md({ "a2a-version": "0.3" }))).error,
      grpc.status.FAILED_PRECONDITION,
      "VERSION_NOT_SUPPORTED",
    );
  });
});

describe("a2a-extensions (R-EXT)", () => {
  test("R-EXT-3 / R-CAP-4: a required extension that was not requested is FAILED_PRECONDITION / EXTENSION_SUPPORT_REQUIRED, on every lifecycle RPC", async () => {
    const calls = [
      rpc(extended).send(sendRequest(userMessage(ACTIVATE))),
      rpc(extended).send(sendRequest(userMessage(ACTIVATE)), extended.metadata({ "a2a-extensions": OPTIONAL })),
      rpc(extended).get({ id: "any" }),
      rpc(extended).list(),
      rpc(extended).cancel({ id: "any" }),
    ];
    for (const { error } of await Promise.all(calls)) {
      const info = expectA2AError(error, grpc.status.FAILED_PRECONDITION, "EXTENSION_SUPPORT_REQUIRED");
      expect(info.metadata["required_extensions"]).toBe(REQUIRED);
      expect(error!.details).toContain(REQUIRED);
      expect(error!.details).toContain("a2a-extensions");
    }
    expect((await rpc(extended).list({}, extended.metadata({ "a2a-extensions": REQUIRED }))).response!.totalSize).toBe(0);
  });

  test("A-15: request validation comes before the extension (capability) check", async () => {
    const { error } = await rpc(extended).send(sendRequest(undefined));
    expect(error!.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  test("R-EXT-1 / R-EXT-5: requested extensions reach the agent; the ones it activates are echoed in the a2a-extensions response header", async () => {
    const { response, error, headers } = await rpc(extended).send(
      sendRequest(userMessage(ACTIVATE)),
      extended.metadata({ "a2a-extensions": `${REQUIRED}, ${OPTIONAL}` }),
    );
    expect(error).toBeUndefined();
    expect(response!.payload!.$case).toBe("message");
    expect(seenRequested).toEqual([REQUIRED, OPTIONAL]);
    const echoed = String(headers.get("a2a-extensions")[0] ?? "")
      .split(",")
      .map((u) => u.trim());
    expect(new Set(echoed)).toEqual(new Set([REQUIRED, OPTIONAL]));
  });

  test("R-EXT-5: an extension activated while working on a task is echoed with the blocking task answer", async () => {
    const { response, headers } = await rpc(extended).send(sendRequest(userMessage(TASK)), extended.metadata({ "a2a-extensions": `${REQUIRED},${OPTIONAL}` }));
    expect(response!.payload!.$case).toBe("task");
    expect(String(headers.get("a2a-extensions")[0])).toContain(OPTIONAL);
  });

  test("R-EXT-2: requested extensions the agent does not know are ignored, not errors, and not echoed", async () => {
    const unknown = "https://unknown.example/ext/v9";
    const metadata = extended.metadata({ "a2a-extensions": `${unknown},${REQUIRED}` });
    const { response, error, headers } = await rpc(extended).send(sendRequest(userMessage(ACTIVATE)), metadata);
    expect(error).toBeUndefined();
    expect(response!.payload!.$case).toBe("message");
    expect(String(headers.get("a2a-extensions")[0] ?? "")).not.toContain(unknown);
    const onPlain = await rpc(s).send(sendRequest(userMessage(OK)), s.metadata({ "a2a-extensions": unknown }));
    expect(onPlain.error).toBeUndefined();
    expect(onPlain.headers.get("a2a-extensions")).toEqual([]);
  });

  test("R-EXT-4: a different version of a required extension does not stand in for it", async () => {
    const { error } = await rpc(extended).list({}, extended.metadata({ "a2a-extensions": "https://ext.example/required/v2" }));
    expectA2AError(error, grpc.status.FAILED_PRECONDITION, "EXTENSION_SUPPORT_REQUIRED");
  });
});
