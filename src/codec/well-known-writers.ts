import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ListValue, Struct, Timestamp, Value } from "@bufbuild/protobuf/wkt";
import { I64, LEN, VARINT, beginLength, byte, double, endLength, int32, int64Field, messageItem, stringItem, tag, unknownFields } from "./proto-writer.js";

/*
 * The well-known types the A2A messages carry, written as protobuf-es writes them: Timestamp,
 * Struct as a JsonObject (message metadata), and Value / Struct / ListValue as messages (data parts).
 */

export function writeTimestamp(t: Timestamp): void {
  int64Field(1, t.seconds);
  if (t.nanos !== 0) {
    tag(2, VARINT);
    int32(t.nanos);
  }
  unknownFields(t.$unknown);
}

// ---- google.protobuf.Struct as protobuf-es represents it in a message field: a JsonObject ----

export function writeJsonStruct(json: JsonObject): void {
  // protobuf-es: null reads as an empty Struct; any other non-object is not a Struct.
  if (json === null) return;
  if (typeof json !== "object" || Array.isArray(json)) throw new Error("cannot encode google.protobuf.Struct: not an object");
  for (const key of Object.keys(json)) {
    tag(1, LEN); // Struct.fields map entry
    const at = beginLength();
    stringItem(1, key);
    messageItem(2, json[key], writeJsonValue); // undefined too: protobuf-es writes an empty Value
    endLength(at);
  }
}

function writeJsonValue(json: JsonValue): void {
  switch (typeof json) {
    case "number":
      tag(2, I64);
      double(json);
      return;
    case "string":
      stringItem(3, json);
      return;
    case "boolean":
      tag(4, VARINT);
      byte(json ? 1 : 0);
      return;
    case "object":
      if (json === null) {
        tag(1, VARINT);
        byte(0); // NULL_VALUE
      } else if (Array.isArray(json)) {
        messageItem(6, json, writeJsonList);
      } else {
        messageItem(5, json, writeJsonStruct);
      }
      return;
  }
  // anything else (undefined, bigint, ...) is a Value with no kind set, as in protobuf-es
}

function writeJsonList(list: JsonValue[]): void {
  for (const item of list) messageItem(1, item, writeJsonValue);
}

// ---- google.protobuf.Value as a message (Part.data) ----

export function writeValue(v: Value): void {
  const kind = v.kind;
  switch (kind.case) {
    case "nullValue":
      tag(1, VARINT);
      int32(kind.value);
      break;
    case "numberValue":
      tag(2, I64);
      double(kind.value);
      break;
    case "stringValue":
      stringItem(3, kind.value);
      break;
    case "boolValue":
      tag(4, VARINT);
      byte(kind.value ? 1 : 0);
      break;
    case "structValue":
      messageItem(5, kind.value, writeStruct);
      break;
    case "listValue":
      messageItem(6, kind.value, writeListValue);
      break;
  }
  unknownFields(v.$unknown);
}

function writeStruct(s: Struct): void {
  const fields = s.fields;
  for (const key of Object.keys(fields)) {
    tag(1, LEN);
    const at = beginLength();
    stringItem(1, key);
    // protobuf-es writes a missing map value as an empty message
    messageItem(2, fields[key] ?? EMPTY_VALUE, writeValue);
    endLength(at);
  }
  unknownFields(s.$unknown);
}

function writeListValue(l: ListValue): void {
  for (const value of l.values) messageItem(1, value ?? EMPTY_VALUE, writeValue);
  unknownFields(l.$unknown);
}

const EMPTY_VALUE = { kind: { case: undefined } } as Value;
