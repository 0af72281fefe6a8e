import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Value } from "@bufbuild/protobuf/wkt";
import type { Part } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { AgentMisuseError } from "./agent-misuse.js";
import { checkJsonObject, jsonToValue } from "./json-value.js";
import { textPartLiteral } from "./message-literals.js";

/**
 * A part as an agent gives it: a string (a text part), or the fields of a Part with plain
 * JSON for `data` (ruling A-27). The part builders (`textPart`, `dataPart`, `filePart`) make
 * these, so an agent never writes the oneof by hand.
 */
export type PartInput = string | PartFields | Part; // a Part as received (ctx.message.parts) may be sent back

export interface PartFields {
  readonly content: PartContentInput;
  readonly filename?: string;
  readonly mediaType?: string;
  readonly metadata?: JsonObject;
}

export type PartContentInput =
  | { readonly case: "text"; readonly value: string }
  | { readonly case: "raw"; readonly value: Uint8Array }
  | { readonly case: "url"; readonly value: string }
  /** Plain JSON, or a google.protobuf.Value made with protobuf-es (it has `$typeName`). */
  | { readonly case: "data"; readonly value: JsonValue | Value };

/** The Part for one agent part; `path` names it in errors ("parts[1]", "artifact() parts[0]"). Throws AgentMisuseError. */
export function partFromInput(input: PartInput, path: string): Part {
  return toPart(input, path, -1);
}

/** The Parts of an agent message or artifact; at least one. `path` names the list in errors. */
export function partsFromInput(inputs: readonly PartInput[], path: string): Part[] {
  if (!Array.isArray(inputs)) throw new AgentMisuseError(`${path}: must be an array of parts (or a string)`);
  if (inputs.length === 0) throw new AgentMisuseError(`${path}: needs at least one part`);
  // Packed lists, as every other parts list is: a holey one (new Array(n)) has a map of its own, and
  // code optimized for one kind is thrown away when the other reaches it (the encoder, the store).
  if (inputs.length === 1) return [toPart(inputs[0]!, path, 0)];
  const parts: Part[] = [];
  for (let i = 0; i < inputs.length; i++) parts.push(toPart(inputs[i]!, path, i));
  return parts;
}

/** Why `path` and `index` apart: the name of a part ("…parts[1]") is built only for an error, not for every part sent. */
function toPart(input: PartInput, path: string, index: number): Part {
  if (typeof input === "string") return textPartLiteral(input);
  if (typeof input !== "object" || input === null)
    throw new AgentMisuseError(`${at(path, index)}: a part is a string or an object with content, not ${input === null ? "null" : typeof input}`);
  const { filename, mediaType, metadata } = input;
  if (filename !== undefined && typeof filename !== "string") throw new AgentMisuseError(`${at(path, index)}.filename: must be a string`);
  if (mediaType !== undefined && typeof mediaType !== "string") throw new AgentMisuseError(`${at(path, index)}.mediaType: must be a string`);
  if (metadata !== undefined) checkJsonObject(metadata, `${at(path, index)}.metadata`);
  return {
    $typeName: "lf.a2a.v1.Part",
    content: contentOf(input.content as PartContentInput | undefined, path, index),
    metadata,
    filename: filename ?? "",
    mediaType: mediaType ?? "",
  };
}

function at(path: string, index: number): string {
  return index < 0 ? path : `${path}[${index}]`;
}

function contentOf(content: PartContentInput | undefined, path: string, index: number): Part["content"] {
  switch (content?.case) {
    case "text":
    case "url":
      if (typeof content.value !== "string") throw new AgentMisuseError(`${at(path, index)}.${content.case}: must be a string`);
      return { case: content.case, value: content.value };
    case "raw":
      if (!(content.value instanceof Uint8Array)) throw new AgentMisuseError(`${at(path, index)}.raw: must be a Uint8Array (or a Buffer)`);
      return { case: "raw", value: content.value };
    case "data":
      return { case: "data", value: isValueMessage(content.value) ? content.value : jsonToValue(content.value, `${at(path, index)}.data`) };
    default:
      throw new AgentMisuseError(
        `${at(path, index)}: content must be { case: "text" | "raw" | "url" | "data", value }; use textPart(), dataPart() or filePart()`,
      );
  }
}

/** A Value made by protobuf-es (create(ValueSchema, ...), fromJson), passed through as it is. */
function isValueMessage(value: unknown): value is Value {
  return typeof value === "object" && value !== null && (value as { $typeName?: unknown }).$typeName === "google.protobuf.Value";
}
