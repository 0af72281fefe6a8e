import { toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Part } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { PartFields } from "../lifecycle/index.js";

/**
 * Part builders for agents: what `ctx.reply`, `ctx.complete`, `ctx.artifact` ... take, so an
 * agent never writes protobuf-es's oneof shapes by hand. Each returns plain fields; the
 * service checks and converts them when the agent sends them (a bad value is refused then,
 * naming the part).
 */

export interface PartOptions {
  /** The part's media type, e.g. "application/json" or "image/png". */
  readonly mediaType?: string;
  readonly filename?: string;
  readonly metadata?: JsonObject;
}

/** A text part. (A plain string given as a part is the same, without options.) */
export function textPart(text: string, options: PartOptions = {}): PartFields {
  return { content: { case: "text", value: text }, ...options };
}

/** A data part from plain JSON: an object, array, string, number, boolean or null (ruling A-27). */
export function dataPart(data: JsonValue, options: PartOptions = {}): PartFields {
  return { content: { case: "data", value: data }, ...options };
}

/** A file: its bytes inline (`bytes`), or a URL where the client can fetch it (`url`), never both. */
export type FileSource = { readonly bytes: Uint8Array; readonly url?: undefined } | { readonly url: string; readonly bytes?: undefined };

/** A file part: raw bytes or a URL, with an optional filename and media type. */
export function filePart(file: FileSource & PartOptions): PartFields {
  const { bytes, url, ...options } = file;
  if ((bytes === undefined) === (url === undefined)) throw new TypeError("filePart() takes either bytes or url");
  return { content: bytes !== undefined ? { case: "raw", value: bytes } : { case: "url", value: url! }, ...options };
}

/** The JSON of an incoming data part (a google.protobuf.Value on the wire); undefined for other parts. */
export function dataOf(part: Part): JsonValue | undefined {
  return part.content.case === "data" ? toJson(ValueSchema, part.content.value) : undefined;
}
