import { protoInt64, type JsonObject, type JsonValue, type UnknownField } from "@bufbuild/protobuf";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import type { Artifact, Message, Part, Task, TaskStatus } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/**
 * Deep copies of the A2A task types, equal to protobuf-es 2.13's `clone(Schema, msg)` and
 * several times faster. Why: the memory store copies every task and change it keeps, so that
 * it never aliases a caller's objects, and the reflective clone() (descriptor walk, a wrapper
 * per message, a JSON → Struct message → JSON round trip for metadata, checks on every set)
 * was ~13% of a blocking SendMessage's CPU. Here one short function per message type copies
 * its fields, as generated code would.
 *
 * It must mirror the Task tree of proto/lf/a2a/v1/a2a.proto (and google.protobuf Timestamp,
 * Struct, Value, ListValue). test/codec/task-clone.test.ts proves equality with clone()
 * and fails when the proto gains a field this file does not know (CLONED_FIELDS).
 *
 * What clone() gives, and so do we:
 * - `$typeName` from the schema; scalars, enums, oneofs and lists always present (proto3
 *   zero message); message fields only when set (not undefined), after those; `$unknown`
 *   last and only when non-empty. Properties outside the schema are dropped.
 * - implicit-presence int32/enum -0 reads as unset, so it comes back as 0; int64 seconds
 *   given as number or string come back as bigint.
 * - a google.protobuf.Struct field (JsonObject) goes through Struct → JSON: values that are
 *   not JSON (undefined, bigint, functions) become null, a Date or class instance becomes a
 *   plain object of its own enumerable keys, an own "__proto__" key is dropped, and a null
 *   metadata becomes {}.
 * - Part.data is a google.protobuf.Value message (a oneof member keeps its message form);
 *   an undefined or null entry in its Struct / ListValue becomes an empty Value.
 *
 * Where we differ, on purpose: clone() shares the input's UnknownField objects (it copies
 * only the list) and copies a Node Buffer with Buffer#slice, which is a view on the same
 * memory; we copy both, so the result shares nothing mutable with the input. And clone()
 * checks every value it sets (throwing on, say, an enum of 1.5); we copy what we are given.
 *
 * Object literals are built with a fixed key order per type (clone()'s order), one literal
 * per combination of set message fields, so that objects of a type share few V8 hidden
 * classes and need no property added later; only the rare `$unknown` is appended.
 */

/** Every field copied below, as "number localName type": the test compares it with the descriptors. */
export const CLONED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "lf.a2a.v1.Task": [
    "1 id string",
    "2 contextId string",
    "3 status lf.a2a.v1.TaskStatus",
    "4 artifacts repeated lf.a2a.v1.Artifact",
    "5 history repeated lf.a2a.v1.Message",
    "6 metadata google.protobuf.Struct",
  ],
  "lf.a2a.v1.TaskStatus": ["1 state enum lf.a2a.v1.TaskState", "2 message lf.a2a.v1.Message", "3 timestamp google.protobuf.Timestamp"],
  "lf.a2a.v1.Message": [
    "1 messageId string",
    "2 contextId string",
    "3 taskId string",
    "4 role enum lf.a2a.v1.Role",
    "5 parts repeated lf.a2a.v1.Part",
    "6 metadata google.protobuf.Struct",
    "7 extensions repeated string",
    "8 referenceTaskIds repeated string",
  ],
  "lf.a2a.v1.Part": [
    "1 text string oneof content",
    "2 raw bytes oneof content",
    "3 url string oneof content",
    "4 data google.protobuf.Value oneof content",
    "5 metadata google.protobuf.Struct",
    "6 filename string",
    "7 mediaType string",
  ],
  "lf.a2a.v1.Artifact": [
    "1 artifactId string",
    "2 name string",
    "3 description string",
    "4 parts repeated lf.a2a.v1.Part",
    "5 metadata google.protobuf.Struct",
    "6 extensions repeated string",
  ],
  "google.protobuf.Timestamp": ["1 seconds int64", "2 nanos int32"],
  "google.protobuf.Struct": ["1 fields map<string, google.protobuf.Value>"],
  "google.protobuf.Value": [
    "1 nullValue enum google.protobuf.NullValue oneof kind",
    "2 numberValue double oneof kind",
    "3 stringValue string oneof kind",
    "4 boolValue bool oneof kind",
    "5 structValue google.protobuf.Struct oneof kind",
    "6 listValue google.protobuf.ListValue oneof kind",
  ],
  "google.protobuf.ListValue": ["1 values repeated google.protobuf.Value"],
};

// ---- one function per message type ----

export function cloneTask(t: Task): Task {
  const id = t.id;
  const contextId = t.contextId;
  const artifacts = cloneList(t.artifacts, cloneArtifact);
  const history = cloneList(t.history, cloneMessage);
  const status = t.status;
  const metadata = t.metadata;
  let out: Task;
  if (metadata === undefined) {
    out =
      status === undefined
        ? { $typeName: "lf.a2a.v1.Task", id, contextId, artifacts, history }
        : { $typeName: "lf.a2a.v1.Task", id, contextId, artifacts, history, status: cloneTaskStatus(status) };
  } else {
    out =
      status === undefined
        ? { $typeName: "lf.a2a.v1.Task", id, contextId, artifacts, history, metadata: cloneJsonStruct(metadata) }
        : { $typeName: "lf.a2a.v1.Task", id, contextId, artifacts, history, status: cloneTaskStatus(status), metadata: cloneJsonStruct(metadata) };
  }
  return withUnknown(out, t.$unknown);
}

export function cloneTaskStatus(s: TaskStatus): TaskStatus {
  const state = int32(s.state);
  const message = s.message;
  const timestamp = s.timestamp;
  let out: TaskStatus;
  if (timestamp === undefined) {
    out = message === undefined ? { $typeName: "lf.a2a.v1.TaskStatus", state } : { $typeName: "lf.a2a.v1.TaskStatus", state, message: cloneMessage(message) };
  } else {
    out =
      message === undefined
        ? { $typeName: "lf.a2a.v1.TaskStatus", state, timestamp: cloneTimestamp(timestamp) }
        : { $typeName: "lf.a2a.v1.TaskStatus", state, message: cloneMessage(message), timestamp: cloneTimestamp(timestamp) };
  }
  return withUnknown(out, s.$unknown);
}

export function cloneMessage(m: Message): Message {
  const messageId = m.messageId;
  const contextId = m.contextId;
  const taskId = m.taskId;
  const role = int32(m.role);
  const parts = cloneList(m.parts, clonePart);
  const extensions = m.extensions.slice();
  const referenceTaskIds = m.referenceTaskIds.slice();
  const metadata = m.metadata;
  const out: Message =
    metadata === undefined
      ? { $typeName: "lf.a2a.v1.Message", messageId, contextId, taskId, role, parts, extensions, referenceTaskIds }
      : { $typeName: "lf.a2a.v1.Message", messageId, contextId, taskId, role, parts, extensions, referenceTaskIds, metadata: cloneJsonStruct(metadata) };
  return withUnknown(out, m.$unknown);
}

export function cloneArtifact(a: Artifact): Artifact {
  const artifactId = a.artifactId;
  const name = a.name;
  const description = a.description;
  const parts = cloneList(a.parts, clonePart);
  const extensions = a.extensions.slice();
  const metadata = a.metadata;
  const out: Artifact =
    metadata === undefined
      ? { $typeName: "lf.a2a.v1.Artifact", artifactId, name, description, parts, extensions }
      : { $typeName: "lf.a2a.v1.Artifact", artifactId, name, description, parts, extensions, metadata: cloneJsonStruct(metadata) };
  return withUnknown(out, a.$unknown);
}

function clonePart(p: Part): Part {
  const from = p.content;
  let content: Part["content"];
  switch (from.case) {
    case "text":
      content = { case: "text", value: from.value };
      break;
    case "raw":
      content = { case: "raw", value: copyBytes(from.value) };
      break;
    case "url":
      content = { case: "url", value: from.value };
      break;
    case "data":
      content = { case: "data", value: cloneValue(from.value) };
      break;
    default:
      content = { case: undefined };
  }
  const filename = p.filename;
  const mediaType = p.mediaType;
  const metadata = p.metadata;
  const out: Part =
    metadata === undefined
      ? { $typeName: "lf.a2a.v1.Part", content, filename, mediaType }
      : { $typeName: "lf.a2a.v1.Part", content, filename, mediaType, metadata: cloneJsonStruct(metadata) };
  return withUnknown(out, p.$unknown);
}

function cloneTimestamp(t: Timestamp): Timestamp {
  const seconds = t.seconds;
  const out: Timestamp = {
    $typeName: "google.protobuf.Timestamp",
    // clone() stores int64 as bigint (protoInt64 parses number or string input)
    seconds: typeof seconds === "bigint" ? seconds : protoInt64.parse(seconds as unknown as string),
    nanos: int32(t.nanos),
  };
  return withUnknown(out, t.$unknown);
}

// ---- google.protobuf.Value / Struct / ListValue as messages (Part.data) ----

function cloneValue(v: Value): Value {
  const from = v.kind;
  let kind: Value["kind"];
  switch (from.case) {
    case "nullValue":
      kind = { case: "nullValue", value: from.value };
      break;
    case "numberValue":
      kind = { case: "numberValue", value: from.value };
      break;
    case "stringValue":
      kind = { case: "stringValue", value: from.value };
      break;
    case "boolValue":
      kind = { case: "boolValue", value: from.value };
      break;
    case "structValue":
      kind = { case: "structValue", value: cloneStruct(from.value) };
      break;
    case "listValue":
      kind = { case: "listValue", value: cloneListValue(from.value) };
      break;
    default:
      kind = { case: undefined };
  }
  const out: Value = { $typeName: "google.protobuf.Value", kind };
  return withUnknown(out, v.$unknown);
}

function cloneStruct(s: Struct): Struct {
  const from = s.fields;
  const fields: Record<string, Value> = {};
  // Plain assignment, as clone()'s map set does (an own "__proto__" key sets the prototype there too).
  for (const key of Object.keys(from)) fields[key] = cloneValueOrEmpty(from[key]);
  const out: Struct = { $typeName: "google.protobuf.Struct", fields };
  return withUnknown(out, s.$unknown);
}

function cloneListValue(l: ListValue): ListValue {
  const from = l.values;
  const values: Value[] = [];
  for (let i = 0; i < from.length; i++) values.push(cloneValueOrEmpty(from[i]));
  const out: ListValue = { $typeName: "google.protobuf.ListValue", values };
  return withUnknown(out, l.$unknown);
}

/** clone() reads a missing entry of a Struct or ListValue as an empty Value. */
function cloneValueOrEmpty(v: Value | undefined | null): Value {
  return v == null ? { $typeName: "google.protobuf.Value", kind: { case: undefined } } : cloneValue(v);
}

// ---- google.protobuf.Struct in a message field: a JsonObject, copied as clone()'s Struct round trip does ----

function cloneJsonStruct(json: JsonObject): JsonObject {
  const out: JsonObject = {};
  if (json === null) return out; // clone() reads null as an empty Struct
  for (const key of Object.keys(json)) {
    // clone() builds the Struct by assignment, where "__proto__" sets the prototype: the key is lost.
    if (key === "__proto__") continue;
    out[key] = cloneJsonValue(json[key]);
  }
  return out;
}

function cloneJsonValue(json: JsonValue | undefined): JsonValue {
  switch (typeof json) {
    case "number":
    case "string":
    case "boolean":
      return json;
    case "object":
      if (json === null) return null;
      if (Array.isArray(json)) {
        const out: JsonValue[] = [];
        for (let i = 0; i < json.length; i++) out.push(cloneJsonValue(json[i]));
        return out;
      }
      return cloneJsonStruct(json);
  }
  return null; // not JSON (undefined, bigint, ...): a Value with no kind, which reads back as null
}

// ---- helpers ----

function cloneList<T>(from: T[], cloneItem: (item: T) => T): T[] {
  // The map of a list of objects from the start, also when it stays empty: `[]` has a map of its
  // own (small integers), and a task's first artifact then threw away code optimized for lists
  // that had items (see emptyObjectList in lifecycle/message-literals.ts).
  const out: T[] = [undefined as T];
  out.length = 0;
  for (let i = 0; i < from.length; i++) out.push(cloneItem(from[i]!));
  return out;
}

/** An implicit-presence int32 or enum: -0 counts as unset, which clone() leaves at 0. */
function int32<T extends number>(value: T): T {
  return value === 0 ? (0 as T) : value;
}

const sliceBytes = Uint8Array.prototype.slice;

/** A copy of the bytes, of the same class: Buffer#slice would be a view on the same memory. */
function copyBytes(value: Uint8Array): Uint8Array {
  return value instanceof Uint8Array ? sliceBytes.call(value) : value;
}

function withUnknown<T extends { $unknown?: UnknownField[] }>(out: T, unknown: UnknownField[] | undefined): T {
  if (unknown != null && unknown.length > 0) {
    const copy: UnknownField[] = [];
    for (let i = 0; i < unknown.length; i++) {
      const field = unknown[i]!;
      copy.push({ no: field.no, wireType: field.wireType, data: copyBytes(field.data) });
    }
    out.$unknown = copy;
  }
  return out;
}
