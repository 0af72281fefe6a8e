/**
 * Error details are readable by tools that know the server only through reflection:
 * reflection serves google.rpc.ErrorInfo, BadRequest, RetryInfo and the other detail types
 * (google/rpc/error_details.proto) beside the services.
 *
 * buf curl (1.75) prints an error's details as {type, value: base64}: it decodes them only
 * with the types compiled into its binary, which do not include google.rpc's, whatever the
 * server serves. grpcurl resolves them through reflection. So the test runs buf curl against
 * bad requests, then decodes its base64 details with descriptors fetched from the server's
 * reflection, as grpcurl does.
 */
import * as grpc from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createFileRegistry, fromBinary, toJson } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";

const run = promisify(execFile);
let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer();
});
afterAll(() => s.close());

/** buf curl against a failing call: its error JSON (stderr), and its exit code. */
async function bufCurlError(method: string, body: unknown): Promise<{ code: string; details: Array<{ type: string; value: string }> }> {
  const args = [
    "--no-install",
    "buf",
    "curl",
    "--protocol",
    "grpc",
    "--http2-prior-knowledge",
    "-H",
    "a2a-version: 1.0",
    "-d",
    JSON.stringify(body),
    `http://${s.target}/lf.a2a.v1.A2AService/${method}`,
  ];
  try {
    await run("npx", args, { timeout: 20_000 });
  } catch (e) {
    return JSON.parse((e as { stderr: string }).stderr);
  }
  throw new Error(`buf curl ${method} succeeded; expected an error`);
}

/** One reflection v1 request: file_containing_symbol (4) or file_by_filename (3); answers the files. */
async function reflect(field: 3 | 4, value: string): Promise<Uint8Array[]> {
  const client = new grpc.Client(s.target, grpc.credentials.createInsecure());
  const decode = (bytes: Buffer) => {
    const files: Uint8Array[] = [];
    const r = new BinaryReader(bytes);
    while (r.pos < r.len) {
      const [f, wire] = r.tag();
      if (f !== 4) {
        if (f === 7) throw new Error(`reflection error for ${value}`);
        r.skip(wire);
        continue;
      }
      const inner = new BinaryReader(r.bytes());
      while (inner.pos < inner.len) {
        const [g, w] = inner.tag();
        if (g === 1) files.push(inner.bytes());
        else inner.skip(w);
      }
    }
    return files;
  };
  try {
    const call = client.makeBidiStreamRequest("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", (b: Buffer) => b, decode);
    const answer = new Promise<Uint8Array[]>((resolve, reject) => {
      call.once("data", resolve);
      call.once("error", reject);
    });
    call.write(Buffer.from(new BinaryWriter().tag(field, 2).string(value).finish()));
    call.end();
    return await answer;
  } finally {
    client.close();
  }
}

/** A registry built only from what reflection answers for `symbol` (and the files it imports). */
async function registryFor(symbol: string) {
  const files = new Map<string, FileDescriptorProto>();
  const add = (list: Uint8Array[]) => list.map((b) => fromBinary(FileDescriptorProtoSchema, b)).forEach((f) => files.set(f.name, f));
  add(await reflect(4, symbol));
  for (;;) {
    const missing = [...files.values()].flatMap((f) => f.dependency).filter((d) => !files.has(d));
    if (missing.length === 0) break;
    for (const name of new Set(missing)) add(await reflect(3, name));
  }
  const root = [...files.values()].find((f) => f.messageType.some((m) => `${f.package}.${m.name}` === symbol))!;
  return createFileRegistry(root, (name) => files.get(name));
}

/** Decodes one of buf curl's details with the reflected descriptors. */
async function decodeDetail(detail: { type: string; value: string }): Promise<unknown> {
  const registry = await registryFor(detail.type);
  const schema = registry.getMessage(detail.type)!;
  return toJson(schema, fromBinary(schema, Buffer.from(detail.value, "base64")));
}

describe("readable error details through reflection", () => {
  test.each(["google.rpc.ErrorInfo", "google.rpc.BadRequest", "google.rpc.RetryInfo", "google.rpc.RequestInfo", "google.rpc.Status"])(
    "R-ERR-6: reflection resolves %s",
    async (symbol) => {
      const registry = await registryFor(symbol);
      expect(registry.getMessage(symbol)).toBeDefined();
    },
  );

  test("R-ERR-3: buf curl GetTask on an unknown task -> its ErrorInfo detail decodes to reason, domain and task_id", async () => {
    const error = await bufCurlError("GetTask", { id: "no-such-task" });
    expect(error.code).toBe("not_found");
    expect(error.details[0]!.type).toBe("google.rpc.ErrorInfo");
    expect(await decodeDetail(error.details[0]!)).toEqual({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { task_id: "no-such-task" } });
  });

  test("R-ERR-5: buf curl SendMessage with an empty part -> its BadRequest detail decodes to the field violation", async () => {
    const error = await bufCurlError("SendMessage", { message: { messageId: "m-1", role: "ROLE_USER", parts: [{}] } });
    expect(error.code).toBe("invalid_argument");
    expect(error.details[0]!.type).toBe("google.rpc.BadRequest");
    const decoded = (await decodeDetail(error.details[0]!)) as { fieldViolations: Array<{ field: string; description: string }> };
    expect(decoded.fieldViolations[0]).toMatchObject({ field: "message.parts[0]" });
  });

  test("list_services still lists only the two services (detail types are not services)", async () => {
    const { stdout } = await run(
      "npx",
      ["--no-install", "buf", "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-services", `http://${s.target}`],
      { timeout: 20_000 },
    );
    expect(stdout.trim().split("\n").sort()).toEqual(["grpc.health.v1.Health", "lf.a2a.v1.A2AService"]);
  });
});
