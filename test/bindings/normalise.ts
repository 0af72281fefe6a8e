/**
 * Results of different bindings compared as ProtoJSON with what must differ taken out: every id
 * (task, context, message, push config) becomes `<id-n>` in order of first appearance, so
 * "this event's taskId is that task's id" still shows; every timestamp becomes `<timestamp>`.
 */
import { toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

const ID_KEYS = new Set(["id", "taskId", "contextId", "messageId"]);

/** A protobuf-es message as ProtoJSON, for a scenario record. */
export function json<S extends DescMessage>(schema: S, message: MessageShape<S>): JsonValue {
  return toJson(schema, message);
}

/** One record (a whole scenario run) with ids and timestamps normalised, under one id mapping. */
export function normalise(record: JsonValue): JsonValue {
  const aliases = new Map<string, string>();
  const alias = (id: JsonValue): JsonValue => {
    if (typeof id !== "string") return id;
    if (!aliases.has(id)) aliases.set(id, `<id-${aliases.size + 1}>`);
    return aliases.get(id)!;
  };
  const walk = (value: JsonValue, key: string): JsonValue => {
    if (Array.isArray(value)) return key === "referenceTaskIds" ? value.map(alias) : value.map((item) => walk(item, key));
    if (value === null || typeof value !== "object") {
      if (ID_KEYS.has(key)) return alias(value);
      return /timestamp$/i.test(key) && typeof value === "string" ? "<timestamp>" : value;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
  };
  return walk(record, "");
}
