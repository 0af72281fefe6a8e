/**
 * What the tests of the static codecs (src/codec) share: the field list of a message tree in the
 * notation of the codecs' *_FIELDS lists, and small builders for hand-picked tasks.
 */
import { create, ScalarType, type DescField, type DescMessage, type MessageInitShape, type UnknownField } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { TimestampSchema, ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { MessageSchema, PartSchema, Role, TaskSchema, type Part } from "../../gen/es/lf/a2a/v1/a2a_pb.js";

/** Every message reachable from `root`, each field as "number localName type". */
export function describeTree(root: DescMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const visit = (desc: DescMessage) => {
    if (desc.typeName in out) return;
    out[desc.typeName] = desc.fields.map(describeField);
    for (const field of desc.fields) if (field.message) visit(field.message);
  };
  visit(root);
  return out;
}

function describeField(field: DescField): string {
  const scalar = (type: ScalarType) => ScalarType[type].toLowerCase();
  const single = (f: { scalar?: ScalarType; enum?: { typeName: string }; message?: { typeName: string } }) =>
    f.scalar !== undefined ? scalar(f.scalar) : f.enum ? `enum ${f.enum.typeName}` : f.message!.typeName;
  let type: string;
  switch (field.fieldKind) {
    case "list":
      type = `repeated ${single(field)}`;
      break;
    case "map":
      type = `map<${scalar(field.mapKey)}, ${single(field)}>`;
      break;
    default:
      type = single(field);
  }
  return `${field.number} ${field.localName} ${type}${field.oneof ? ` oneof ${field.oneof.name}` : ""}`;
}

export const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
export const unknown = (no: number, ...data: number[]): UnknownField => ({ no, wireType: WireType.Varint, data: new Uint8Array(data) });
export const at = (seconds: bigint, nanos = 0) => create(TimestampSchema, { seconds, nanos });
export const textPart = (value: string) => create(PartSchema, { content: { case: "text", value } });
export const message = (init: MessageInitShape<typeof MessageSchema> = {}) =>
  create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [textPart("hi")], ...init });
export const taskWith = (init: MessageInitShape<typeof TaskSchema>) => create(TaskSchema, { id: "t-1", contextId: "c-1", ...init });
export const withParts = (...parts: Part[]) => taskWith({ history: [message({ parts })] });
export const value = (kind: Value["kind"]) => create(ValueSchema, { kind });
