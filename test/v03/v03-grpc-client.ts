/**
 * The v0.3 gRPC client for tests: ts-proto's grpc-js client of a2a.v1.A2AService (an independent
 * codec), calls as promises, streams collected, and reflection's service list.
 */
import * as grpc from "@grpc/grpc-js";
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import {
  A2AServiceClient,
  Role,
  type Message,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type StreamResponse,
} from "../../gen/ts-proto/a2a/v1/a2a.js";
import { unary } from "../foundation/helpers.js";

export { unary };

let serial = 0;

/** A v0.3 user message: `content`, one text part, a fresh message id. */
export function v03Message(text: string, extra: Partial<Message> = {}): Message {
  return {
    messageId: `v03-msg-${++serial}`,
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    content: [{ part: { $case: "text", value: text } }],
    extensions: [],
    ...extra,
  };
}

export function v03Send(message: Message, configuration?: Partial<SendMessageConfiguration>): SendMessageRequest {
  return {
    request: message,
    configuration: configuration && { acceptedOutputModes: [], historyLength: 0, blocking: false, ...configuration },
  };
}

export function v03Client(target: string): A2AServiceClient {
  return new A2AServiceClient(target, grpc.credentials.createInsecure());
}

/** Every message of a server stream, and how it ended. */
export function collect(
  call: grpc.ClientReadableStream<StreamResponse>,
): Promise<{ events: StreamResponse[]; error?: grpc.ServiceError; headers: grpc.Metadata }> {
  return new Promise((resolve) => {
    const events: StreamResponse[] = [];
    let headers = new grpc.Metadata();
    call.on("metadata", (md) => (headers = md));
    call.on("data", (event: StreamResponse) => events.push(event));
    call.on("error", (error: grpc.ServiceError) => resolve({ events, error, headers }));
    call.on("end", () => resolve({ events, headers }));
  });
}

/** What each event of a v0.3 stream is, for compact assertions: "task:…", "status:<state>:final". */
export function shapes(events: readonly StreamResponse[]): string[] {
  return events.map((e) => {
    const p = e.payload;
    if (p?.$case === "statusUpdate") return `status:${p.value.status?.state}${p.value.final ? ":final" : ""}`;
    if (p?.$case === "task") return `task:${p.value.status?.state}`;
    if (p?.$case === "artifactUpdate") return "artifact";
    return p?.$case ?? "empty";
  });
}

/** The services grpc.reflection.v1 lists (list_services over a raw bidi call), sorted. */
export async function reflectedServices(target: string): Promise<string[]> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  try {
    const call = client.makeBidiStreamRequest(
      "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
      (b: Buffer) => b,
      (b: Buffer) => b,
    );
    const reply = new Promise<Buffer>((resolve, reject) => {
      call.once("data", resolve);
      call.once("error", reject);
    });
    call.write(Buffer.from(new BinaryWriter().tag(7, 2).string("*").finish())); // ServerReflectionRequest.list_services
    call.end();
    return readServiceNames(await reply);
  } finally {
    client.close();
  }
}

/** ServerReflectionResponse.list_services_response (6) → service (1) → name (1). */
function readServiceNames(bytes: Uint8Array): string[] {
  const names: string[] = [];
  const fields = (data: Uint8Array, wanted: number, each: (r: BinaryReader) => void) => {
    const r = new BinaryReader(data);
    while (r.pos < r.len) {
      const [field, wire] = r.tag();
      if (field === wanted) each(r);
      else r.skip(wire);
    }
  };
  fields(bytes, 6, (r) => fields(r.bytes(), 1, (s) => fields(s.bytes(), 1, (n) => names.push(n.string()))));
  return names.sort();
}
