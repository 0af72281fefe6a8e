import * as grpc from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";

import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { TaskSchema, TaskState } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { startTestServer, type TestServer } from "./helpers.js";

const run = promisify(execFile);
const A2A_METHODS = [
  "CancelTask",
  "CreateTaskPushNotificationConfig",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
  "GetTask",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "ListTasks",
  "SendMessage",
  "SendStreamingMessage",
  "SubscribeToTask",
].map((m) => `lf.a2a.v1.A2AService/${m}`);

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({
    handlers: { GetTask: async (r) => create(TaskSchema, { id: r.id, contextId: "ctx", status: { state: TaskState.COMPLETED } }) },
  });
});
afterAll(() => t.close());

/** Runs the real third-party client `buf curl` (grpc-go based) against the server. */
async function bufCurl(...args: string[]): Promise<string> {
  const { stdout } = await run("npx", ["--no-install", "buf", "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { timeout: 20_000 });
  return stdout;
}

describe("server reflection through buf curl", () => {
  const base = () => `http://127.0.0.1:${t.server.port}`;

  test.each(["grpc-v1", "grpc-v1alpha"])("FND-REFLECT (%s): --list-services shows the A2A service and health", async (protocol) => {
    const out = await bufCurl("--reflect-protocol", protocol, "--list-services", base());
    expect(out.trim().split("\n").sort()).toEqual(["grpc.health.v1.Health", "lf.a2a.v1.A2AService"]);
  });

  test("FND-REFLECT: --list-methods shows the 11 A2A methods and the health methods", async () => {
    const out = await bufCurl("--list-methods", base());
    const methods = out.trim().split("\n");
    expect(methods.filter((m) => m.startsWith("lf.a2a.v1.A2AService/")).sort()).toEqual(A2A_METHODS);
    expect(methods.filter((m) => m.startsWith("grpc.health.v1.Health/")).sort()).toEqual([
      "grpc.health.v1.Health/Check",
      "grpc.health.v1.Health/List",
      "grpc.health.v1.Health/Watch",
    ]);
  });

  test("FND-REFLECT: a client that knows nothing but reflection can call GetTask with JSON", async () => {
    const out = await bufCurl("-H", "a2a-version: 1.0", "-d", '{"id":"task-1"}', `${base()}/lf.a2a.v1.A2AService/GetTask`);
    expect(JSON.parse(out)).toMatchObject({ id: "task-1", contextId: "ctx", status: { state: "TASK_STATE_COMPLETED" } });
  });
});

// A minimal reflection client: requests and responses of grpc.reflection.v1(alpha) encoded by hand.
function encodeRequest(field: 3 | 4 | 7, value: string): Buffer {
  return Buffer.from(new BinaryWriter().tag(field, 2).string(value).finish());
}

interface ReflectionAnswer {
  files: Uint8Array[];
  services: string[];
  error?: string;
}

function decodeResponse(bytes: Buffer): ReflectionAnswer {
  const answer: ReflectionAnswer = { files: [], services: [] };
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field === 4 || field === 6 || field === 7) {
      const inner = new BinaryReader(r.bytes());
      while (inner.pos < inner.len) {
        const [f, w] = inner.tag();
        if (field === 4 && f === 1) answer.files.push(inner.bytes());
        else if (field === 6 && f === 1) {
          const svc = new BinaryReader(inner.bytes());
          while (svc.pos < svc.len) {
            const [sf, sw] = svc.tag();
            if (sf === 1) answer.services.push(svc.string());
            else svc.skip(sw);
          }
        } else if (field === 7 && f === 2) answer.error = inner.string();
        else inner.skip(w);
      }
    } else r.skip(wire);
  }
  return answer;
}

async function ask(version: "v1" | "v1alpha", field: 3 | 4 | 7, value: string): Promise<ReflectionAnswer> {
  const client = new grpc.Client(`127.0.0.1:${t.server.port}`, grpc.credentials.createInsecure());
  try {
    const call = client.makeBidiStreamRequest(`/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`, (b: Buffer) => b, decodeResponse);
    const answer = new Promise<ReflectionAnswer>((resolve, reject) => {
      call.once("data", resolve);
      call.once("error", reject);
    });
    call.write(encodeRequest(field, value));
    call.end();
    return await answer;
  } finally {
    client.close();
  }
}

describe("server reflection, file by file", () => {
  test.each(["v1", "v1alpha"] as const)("FND-REFLECT (%s): the A2A file and every file it imports resolve into a complete descriptor set", async (version) => {
    const files = new Map<string, FileDescriptorProto>();
    const add = (answer: ReflectionAnswer) => {
      expect(answer.error).toBeUndefined();
      for (const bytes of answer.files) {
        const file = fromBinary(FileDescriptorProtoSchema, bytes);
        files.set(file.name, file);
      }
    };
    add(await ask(version, 4, "lf.a2a.v1.A2AService"));
    // Fetch imports by file name, as grpcurl and buf do, until nothing is missing.
    for (
      let missing = [...files.values()].flatMap((f) => f.dependency).filter((d) => !files.has(d));
      missing.length > 0;
      missing = [...files.values()].flatMap((f) => f.dependency).filter((d) => !files.has(d))
    ) {
      for (const name of new Set(missing)) add(await ask(version, 3, name));
    }
    expect([...files.keys()]).toEqual(
      expect.arrayContaining([
        "lf/a2a/v1/a2a.proto",
        "google/api/annotations.proto",
        "google/api/http.proto",
        "google/api/client.proto",
        "google/api/field_behavior.proto",
        "google/protobuf/descriptor.proto",
        "google/protobuf/struct.proto",
        "google/protobuf/timestamp.proto",
        "google/protobuf/empty.proto",
      ]),
    );
    // createFileRegistry fails on any unresolved import or type: the set is complete.
    const registry = createFileRegistry(files.get("lf/a2a/v1/a2a.proto")!, (name) => files.get(name));
    const service = registry.getService("lf.a2a.v1.A2AService");
    expect(service?.methods.map((m) => `lf.a2a.v1.A2AService/${m.name}`).sort()).toEqual(A2A_METHODS);
    expect(registry.getMessage("lf.a2a.v1.SendMessageRequest")?.fields.map((f) => f.name)).toContain("configuration");
  });

  test("FND-REFLECT: the health service is described too", async () => {
    const answer = await ask("v1", 4, "grpc.health.v1.Health");
    const names = answer.files.map((b) => fromBinary(FileDescriptorProtoSchema, b).name);
    expect(names).toContain("grpc/health/v1/health.proto");
  });
});
