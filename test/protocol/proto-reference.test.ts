/**
 * The wire contract the server really uses (the descriptor embedded in gen/es, which its codec
 * and reflection serve) is the upstream A2A v1.0.1 proto's (proto-reference/), fact for fact:
 * also what `buf breaking` (scripts/check-proto.mjs) does not look at, such as an added field,
 * a changed JSON name, field_behavior or an rpc's HTTP binding.
 */
import { createRegistry, fromBinary, toJson, type JsonObject } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { file_google_api_annotations } from "../../gen/es/google/api/annotations_pb.js";
import { file_google_api_client } from "../../gen/es/google/api/client_pb.js";
import { file_google_api_field_behavior } from "../../gen/es/google/api/field_behavior_pb.js";
import { file_lf_a2a_v1_a2a } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
// @ts-expect-error: a plain JavaScript script of the repository, without types
import { buildReference } from "../../scripts/check-proto.mjs";
// @ts-expect-error: a plain JavaScript script of the repository, without types
import { contractDiff, contractLines, contractSize } from "../../scripts/proto-contract.mjs";

type Lines = string[];
const lines = contractLines as (file: JsonObject) => Lines;
const diff = contractDiff as (want: Lines, got: Lines) => Lines;
const size = contractSize as (l: Lines) => { messages: number; fields: number; enumValues: number; rpcs: number };

// The option extensions the contract compares (field_behavior, http, method_signature).
const registry = createRegistry(file_google_api_annotations, file_google_api_client, file_google_api_field_behavior);

function referenceFile(): JsonObject {
  const dir = mkdtempSync(join(tmpdir(), "a2a-proto-reference-test-"));
  try {
    const image = join(dir, "reference.binpb");
    (buildReference as (out: string) => void)(image);
    const set = fromBinary(FileDescriptorSetSchema, readFileSync(image));
    const file = set.file.find((f) => f.name === "lf/a2a/v1/a2a.proto");
    if (file === undefined) throw new Error("the reference build has no lf/a2a/v1/a2a.proto");
    return toJson(FileDescriptorProtoSchema, file, { registry }) as JsonObject;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the proto reference (upstream A2A v1.0.1)", () => {
  const reference = lines(referenceFile());
  const served = lines(toJson(FileDescriptorProtoSchema, file_lf_a2a_v1_a2a.proto, { registry }) as JsonObject);

  test("the check compares something: the reference has the A2A service's messages, fields and rpcs", () => {
    const covered = size(reference);
    expect(covered.messages).toBeGreaterThan(40);
    expect(covered.fields).toBeGreaterThan(150);
    expect(covered.rpcs).toBe(11);
    expect(reference.some((l) => l.startsWith("field .lf.a2a.v1.Task #1 id: ") && l.includes("REQUIRED"))).toBe(true);
    expect(reference.some((l) => l.startsWith("rpc .lf.a2a.v1.A2AService.SendMessage: ") && l.includes("/message:send"))).toBe(true);
  });

  test("the descriptor in gen/es matches it fact for fact", () => {
    expect(diff(reference, served)).toEqual([]);
  });

  test("a difference buf breaking allows (an added field, a JSON name) is one the comparison sees", () => {
    const added = [...served, "field .lf.a2a.v1.Task #99 extra: LABEL_OPTIONAL TYPE_STRING, json extra"];
    expect(diff(reference, added)).toEqual(["+ field .lf.a2a.v1.Task #99 extra: LABEL_OPTIONAL TYPE_STRING, json extra"]);
    const renamed = served.map((l) => l.replace("json contextId", "json context_id"));
    expect(diff(reference, renamed).length).toBeGreaterThan(0);
  });
});
