import { afterEach, describe, expect, it } from "@jest/globals";
import { create, fromBinary, ScalarType, toBinary, type DescField, type DescMessage, type MessageInitShape, type UnknownField } from "@bufbuild/protobuf";
import { BinaryWriter, configureTextEncoding, getTextEncoding, WireType } from "@bufbuild/protobuf/wire";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  MessageSchema,
  PartSchema,
  Role,
  SendMessageConfigurationSchema,
  SendMessageRequestSchema,
  TaskPushNotificationConfigSchema,
  type SendMessageRequest,
} from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { installProtobufTextEncoding } from "../../src/protocol/protobuf-text-encoding.js";
import { decodeSendMessageRequest, KNOWN_FIELDS } from "../../src/codec/send-request-decoder.js";

const standardTextEncoding = getTextEncoding();
afterEach(() => configureTextEncoding(standardTextEncoding));

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const fromHex = (text: string) => new Uint8Array(Buffer.from(text.replace(/\s+/g, ""), "hex"));
const encode = (init: MessageInitShape<typeof SendMessageRequestSchema>) => toBinary(SendMessageRequestSchema, create(SendMessageRequestSchema, init));
const concat = (...chunks: Uint8Array[]) => new Uint8Array(Buffer.concat(chunks));

type Outcome = { threw: true } | { threw: false; value: SendMessageRequest };
function reference(bytes: Uint8Array): Outcome {
  try {
    return { threw: false, value: fromBinary(SendMessageRequestSchema, bytes) };
  } catch {
    return { threw: true };
  }
}

/** The decoder's result is fromBinary's, deep and strict (same keys, same $typeName, same value types). */
function expectSameAsFromBinary(bytes: Uint8Array): void {
  const got = decodeSendMessageRequest(bytes);
  expect(got).toBeDefined();
  expect(got).toStrictEqual(fromBinary(SendMessageRequestSchema, bytes));
}

/** Never throws; undefined, or exactly fromBinary's result; undefined whenever fromBinary throws. */
function expectDeclinedOrSame(bytes: Uint8Array, label: string): boolean {
  let got: SendMessageRequest | undefined;
  try {
    got = decodeSendMessageRequest(bytes);
  } catch (error) {
    throw new Error(`${label}: decoder threw on ${hex(bytes)}: ${String(error)}`);
  }
  if (got === undefined) return false;
  const expected = reference(bytes);
  try {
    expect(expected.threw).toBe(false);
    if (!expected.threw) expect(got).toStrictEqual(expected.value);
  } catch (error) {
    throw new Error(`${label}: differs from fromBinary on ${hex(bytes)}: ${(error as Error).message}`);
  }
  return true;
}

function withUnknown<T extends { $unknown?: UnknownField[] }>(message: T, no: number, wireType: WireType, ...data: number[]): T {
  message.$unknown = [{ no, wireType, data: new Uint8Array(data) }];
  return message;
}

const text = (value: string, init: MessageInitShape<typeof PartSchema> = {}) => create(PartSchema, { ...init, content: { case: "text", value } });
const userMessage = (init: MessageInitShape<typeof MessageSchema> = {}) =>
  create(MessageSchema, { messageId: "m-1", role: Role.USER, parts: [text("hi")], ...init });

const handPicked: Array<[string, Uint8Array]> = [
  ["empty input (no message at all)", new Uint8Array(0)],
  ["the benchmark's request", encode({ message: userMessage({ messageId: "bench-message-1", parts: [text("What is 2 + 2?")] }) })],
  ["a message with every field at its zero value", encode({ message: create(MessageSchema) })],
  [
    "every fast-path field set",
    encode({
      tenant: "tenant-a",
      message: userMessage({
        contextId: "9b2f3c1e-8f1d-4a55-9d7e-0c2a4b6d8e10",
        taskId: "task-7",
        role: Role.AGENT,
        parts: [
          text("hello", { filename: "hello.txt", mediaType: "text/plain" }),
          create(PartSchema, { content: { case: "url", value: "https://example.com/a.png" }, filename: "a.png", mediaType: "image/png" }),
          create(PartSchema, { content: { case: "raw", value: new Uint8Array([0, 1, 2, 254, 255]) }, mediaType: "application/octet-stream" }),
        ],
        extensions: ["https://example.com/ext/1", "urn:ext:2"],
        referenceTaskIds: ["task-1", "task-2", "task-3"],
      }),
      configuration: create(SendMessageConfigurationSchema, {
        acceptedOutputModes: ["text/plain", "application/json"],
        historyLength: 10,
        returnImmediately: true,
      }),
    }),
  ],
  ["non-ASCII and emoji text", encode({ tenant: "ténant", message: userMessage({ parts: [text("héllo 日本語 🎉 👍🏽"), text("\u0000\u007f\u0080")] }) })],
  ["long ASCII and long non-ASCII strings", encode({ message: userMessage({ parts: [text("a".repeat(300)), text("é".repeat(200))] }) })],
  [
    "a part with no content, and empty text/url/raw",
    encode({
      message: userMessage({
        parts: [
          create(PartSchema, { filename: "only-a-name" }),
          text(""),
          create(PartSchema, { content: { case: "url", value: "" } }),
          create(PartSchema, { content: { case: "raw", value: new Uint8Array(0) } }),
        ],
      }),
    }),
  ],
  [
    "raw bytes long enough for a two-byte length",
    encode({
      message: userMessage({ parts: [create(PartSchema, { content: { case: "raw", value: new Uint8Array(1000).map((_, i) => i * 7) } })] }),
    }),
  ],
  ["many parts", encode({ message: userMessage({ parts: Array.from({ length: 20 }, (_, i) => text(`part ${i}`)) }) })],
  ["negative history_length (a ten-byte varint)", encode({ message: userMessage(), configuration: { historyLength: -1 } })],
  ["history_length at int32's edges", encode({ message: userMessage(), configuration: { historyLength: -2147483648 } })],
  ["history_length 2147483647", encode({ message: userMessage(), configuration: { historyLength: 2147483647 } })],
  ["history_length 0 (present, unlike an absent one)", encode({ message: userMessage(), configuration: { historyLength: 0 } })],
  ["an empty configuration", encode({ message: userMessage(), configuration: {} })],
  ["role numbers outside the enum (kept as numbers)", encode({ message: userMessage({ role: 7 as Role }) })],
  ["a negative role number", encode({ message: userMessage({ role: -3 as Role }) })],
  ["a huge role number", encode({ message: userMessage({ role: 2147483647 as Role }) })],
  // Hand-written wire forms that toBinary does not produce but fromBinary accepts.
  ["a scalar twice: the last one wins", concat(encode({ tenant: "first" }), encode({ tenant: "second", message: userMessage() }))],
  ["zero values written explicitly", fromHex("0a00 1208 0a00 2000 2a02 0a00 1a04 1800 2000")],
  ["oneof members one after another: the last one wins", fromHex("120e 0a01 6d 2a09 0a01 61 1201 ff 1a01 75")],
  ["repeated strings interleaved with other fields", fromHex("121a 3a01 61 0a01 6d 3a01 62 4201 78 2000 3a00 4201 79 2a00 2a03 3201 78")],
  ["a length as a non-canonical two-byte varint", fromHex("1205 0a82 00 6d 6d")],
  ["a six-byte role varint (bits above 32 ignored)", fromHex("1207 2081 8080 8080 01")],
  ["a ten-byte role varint with high junk", fromHex("120b 20ff ffff ffff ffff ffff 01")],
  ["a UTF-8 byte order mark at the start of a string", fromHex("1207 0a05 efbbbf 6869")],
];

describe("decodeSendMessageRequest: a static decoder for lf.a2a.v1.SendMessageRequest, exactly protobuf-es's fromBinary", () => {
  it("R-GEN-1: knows every field of SendMessageRequest, SendMessageConfiguration, Message and Part (fails when the proto gains one)", () => {
    const roots = [SendMessageRequestSchema, SendMessageConfigurationSchema, MessageSchema, PartSchema];
    const described = Object.fromEntries(roots.map((desc) => [desc.typeName, desc.fields.map(describeField)]));
    const known = Object.fromEntries(Object.entries(KNOWN_FIELDS).map(([name, fields]) => [name, fields.map((f) => f.replace(/ (decoded|declined)$/, ""))]));
    expect(known).toEqual(described);
    // A decoded message field must lead to a message the decoder reads.
    for (const desc of roots) {
      for (const field of desc.fields) {
        const target = field.fieldKind === "message" ? field.message : field.fieldKind === "list" && field.listKind === "message" ? field.message : undefined;
        if (target && statusOf(desc, field) === "decoded") expect(Object.keys(KNOWN_FIELDS)).toContain(target.typeName);
      }
    }
  });

  it("R-GEN-1: each field listed as decoded is decoded, each listed as declined is declined", () => {
    const roots = [SendMessageRequestSchema, SendMessageConfigurationSchema, MessageSchema, PartSchema];
    for (const desc of roots) {
      for (const field of desc.fields) {
        const bytes = encode(requestWith(desc, field));
        expect(bytes.length).toBeGreaterThan(0);
        if (statusOf(desc, field) === "decoded") expectSameAsFromBinary(bytes);
        else
          expect({ field: `${desc.typeName}.${field.name}`, got: decodeSendMessageRequest(bytes) }).toEqual({
            field: `${desc.typeName}.${field.name}`,
            got: undefined,
          });
      }
    }
  });

  for (const [encoding, install] of [
    ["protobuf-es's standard text encoding", () => {}],
    ["the server's text encoding", installProtobufTextEncoding],
  ] as const) {
    it.each(handPicked)(`R-GEN-1: %s, with ${encoding}, equals fromBinary`, (_label, bytes) => {
      install();
      expectSameAsFromBinary(bytes);
    });
  }

  it("R-GEN-1: strings go through the text encoding configured at call time, in strict mode", () => {
    const calls: Array<[string, boolean | undefined]> = [];
    configureTextEncoding({
      ...standardTextEncoding,
      decodeUtf8: (bytes, strict) => {
        calls.push([Buffer.from(bytes).toString("latin1"), strict]);
        return `<${standardTextEncoding.decodeUtf8(bytes, strict)}>`;
      },
    });
    const bytes = encode({ tenant: "t", message: userMessage({ messageId: "m", parts: [text("x")] }) });
    const got = decodeSendMessageRequest(bytes)!;
    expect(got.tenant).toBe("<t>");
    expect(got.message?.parts[0]?.content).toEqual({ case: "text", value: "<x>" });
    expect(calls.every(([, strict]) => strict === true)).toBe(true);
    expect(got).toStrictEqual(fromBinary(SendMessageRequestSchema, bytes));
  });

  it("R-GEN-1: input given as a Buffer, and as a view into a larger buffer", () => {
    const bytes = handPicked.find(([label]) => label === "every fast-path field set")![1];
    const backing = new Uint8Array(bytes.length + 20).fill(0xff);
    backing.set(bytes, 7);
    const view = backing.subarray(7, 7 + bytes.length);
    expect(decodeSendMessageRequest(view)).toStrictEqual(fromBinary(SendMessageRequestSchema, bytes));

    // With a Buffer, fromBinary's raw bytes are a Buffer view into the input; ours a plain copy of the same bytes.
    const buffer = Buffer.from(bytes);
    const got = decodeSendMessageRequest(buffer)!;
    const raw = got.message!.parts[2]!.content;
    expect(raw.case).toBe("raw");
    const value = raw.value as Uint8Array;
    expect(value.constructor).toBe(Uint8Array);
    expect(value.buffer).not.toBe(buffer.buffer);
    expect(value.byteLength).toBe(value.buffer.byteLength);
    expect(Array.from(value)).toEqual([0, 1, 2, 254, 255]);
    buffer.fill(0); // the caller's bytes may be reused: the message keeps its own
    expect(Array.from(value)).toEqual([0, 1, 2, 254, 255]);
    expect(got.message!.messageId).toBe("m-1");
  });

  const outside: Array<[string, Uint8Array]> = [
    ["request metadata", encode({ message: userMessage(), metadata: { k: "v" } })],
    ["empty request metadata", encode({ message: userMessage(), metadata: {} })],
    ["message metadata", encode({ message: userMessage({ metadata: { k: 1 } }) })],
    ["part metadata", encode({ message: userMessage({ parts: [text("x", { metadata: { a: true } })] }) })],
    [
      "a data part",
      encode({
        message: userMessage({
          parts: [create(PartSchema, { content: { case: "data", value: create(ValueSchema, { kind: { case: "stringValue", value: "x" } }) } })],
        }),
      }),
    ],
    [
      "a push notification config",
      encode({
        message: userMessage(),
        configuration: { taskPushNotificationConfig: create(TaskPushNotificationConfigSchema, { url: "https://example.com/hook" }) },
      }),
    ],
    ["an unknown field in the request", concat(encode({ message: userMessage() }), fromHex("2801"))],
    ["an unknown field with a two-byte tag", concat(encode({ message: userMessage() }), fromHex("f80701"))],
    // create() drops $unknown from an init object; toBinary writes it when set on a message.
    ["an unknown field in the message", encode({ message: withUnknown(userMessage(), 9, WireType.Varint, 1) })],
    ["an unknown field in a part", encode({ message: userMessage({ parts: [withUnknown(create(PartSchema), 8, WireType.LengthDelimited, 1, 65)] }) })],
    [
      "an unknown field in the configuration",
      encode({ message: userMessage(), configuration: withUnknown(create(SendMessageConfigurationSchema), 5, WireType.Varint, 1) }),
    ],
    ["a group wire type (start/end) on a known field", fromHex("0b0c")],
    ["a group on an unknown field", fromHex("2b2c")],
    ["a string field sent as a varint", fromHex("0801")],
    ["a message field sent as fixed32", fromHex("1501000000")],
    ["role sent length-delimited (a packed form)", fromHex("1203 220101")],
    ["history_length sent length-delimited", fromHex("1a03 1a0105")],
    ["return_immediately sent as fixed64", fromHex("1a09 210100000000000000")],
    ["a bool as a two-byte varint", fromHex("1a03 208100")],
    ["a bool of 2", fromHex("1a02 2002")],
    ["a known field with a non-canonical two-byte tag", fromHex("8a00 0174")],
    ["the message field twice (protobuf-es merges them)", concat(encode({ message: userMessage() }), encode({ message: userMessage({ taskId: "t" }) }))],
    ["the configuration twice", concat(encode({ configuration: { historyLength: 1 } }), encode({ configuration: { returnImmediately: true } }))],
    ["invalid UTF-8 in a string", fromHex("0a02 c328")],
    ["a lone surrogate encoded in UTF-8", fromHex("1205 0a03 eda080")],
    ["truncated: a length past the end", fromHex("0a05 6162")],
    ["truncated: inside a varint", fromHex("1a02 1880")],
    ["truncated: a nested message longer than its parent", fromHex("1203 2a05 0a03 616263")],
    ["a string longer than its enclosing message", fromHex("1203 0a05 61 6263 6465")],
    ["a varint longer than ten bytes", fromHex("120d 20 ffffffffffffffffffff 0a00")],
    ["a string length of 2^32 - 1", fromHex("0aff ffff ff0f 61")],
    ["a string length of 2^31", fromHex("0a80 8080 8008 61")],
    ["a message length of 2^32 - 1", fromHex("12ff ffff ff0f 0a00")],
    ["field number 0", fromHex("0201")],
    ["wire type 7", fromHex("0f")],
    ["garbage", fromHex("ffffffffffffffffffff")],
  ];

  it.each(outside)("R-GEN-1: declines %s (undefined: the caller falls back to fromBinary)", (_label, bytes) => {
    expect(() => decodeSendMessageRequest(bytes)).not.toThrow();
    expect(decodeSendMessageRequest(bytes)).toBeUndefined();
  });

  it("R-GEN-1: every prefix of a full request is either declined or equal to fromBinary's result", () => {
    const bytes = handPicked.find(([label]) => label === "every fast-path field set")![1];
    let accepted = 0;
    for (let n = 0; n <= bytes.length; n++) if (expectDeclinedOrSame(bytes.subarray(0, n), `prefix ${n}`)) accepted++;
    // Only the prefixes that end at a top-level field boundary are whole messages.
    expect(accepted).toBe(4);
  });

  it("R-GEN-1: a Buffer input (as grpc-js hands it: short ASCII strings are read from it directly) decodes as the same bytes in a Uint8Array, for seeded random requests and their mutations", () => {
    const random = mulberry32(0xb0ff_e4a2);
    let accepted = 0;
    let nonAscii = 0;
    for (let i = 0; i < 1500; i++) {
      const bytes = encode(randomRequest(random).init);
      for (const input of [bytes, mutate(bytes, random)]) {
        const fromBuffer = decodeSendMessageRequest(Buffer.from(input));
        expect({ i, got: fromBuffer }).toStrictEqual({ i, got: decodeSendMessageRequest(new Uint8Array(input)) });
        if (fromBuffer !== undefined) accepted++;
        if (input.some((b) => b >= 0x80)) nonAscii++;
      }
    }
    expect(accepted).toBeGreaterThan(1000);
    expect(nonAscii).toBeGreaterThan(300); // UTF-8 text and invalid bytes reach the standard decoder
  });

  it("R-GEN-1: seeded random requests, and random mutations of their bytes: declined, or exactly fromBinary's result", () => {
    const random = mulberry32(0x5eed_a2a1);
    let fastPath = 0;
    let mutatedAccepted = 0;
    let mutatedDeclinedWhereFromBinaryThrew = 0;
    const cases = 2500;
    for (let i = 0; i < cases; i++) {
      const { init, fast } = randomRequest(random);
      const bytes = encode(init);
      if (fast) {
        fastPath++;
        try {
          expectSameAsFromBinary(bytes);
        } catch (error) {
          throw new Error(`case ${i}: ${hex(bytes)}: ${(error as Error).message}`);
        }
      } else {
        expect({ i, got: decodeSendMessageRequest(bytes) }).toEqual({ i, got: undefined });
      }
      const mutated = mutate(bytes, random);
      if (expectDeclinedOrSame(mutated, `case ${i} mutated`)) mutatedAccepted++;
      else if (reference(mutated).threw) mutatedDeclinedWhereFromBinaryThrew++;
    }
    // The generator must exercise both sides, or the test proves nothing.
    expect(fastPath).toBeGreaterThan(cases * 0.6);
    expect(fastPath).toBeLessThan(cases * 0.9);
    expect(mutatedAccepted).toBeGreaterThan(cases * 0.05); // ~10% with this seed
    expect(mutatedDeclinedWhereFromBinaryThrew).toBeGreaterThan(cases * 0.1);
  });
});

// ---- descriptors ----

function describeField(field: DescField): string {
  const scalar = (type: ScalarType) => ScalarType[type].toLowerCase();
  let type: string;
  switch (field.fieldKind) {
    case "scalar":
      type = `${field.proto.proto3Optional ? "optional " : ""}${scalar(field.scalar)}`;
      break;
    case "enum":
      type = `enum ${field.enum.typeName}`;
      break;
    case "message":
      type = field.message.typeName;
      break;
    case "list":
      type = `repeated ${field.listKind === "scalar" ? scalar(field.scalar) : field.listKind === "enum" ? `enum ${field.enum.typeName}` : field.message.typeName}`;
      break;
    case "map":
      type = `map<${scalar(field.mapKey)}, ${field.mapKind === "scalar" ? scalar(field.scalar) : field.mapKind === "enum" ? field.enum.typeName : field.message.typeName}>`;
      break;
  }
  return `${field.number} ${field.localName} ${type}${field.oneof ? ` oneof ${field.oneof.localName}` : ""}`;
}

function statusOf(desc: DescMessage, field: DescField): string | undefined {
  return KNOWN_FIELDS[desc.typeName]
    ?.find((line) => line.startsWith(`${describeField(field)} `))
    ?.split(" ")
    .pop();
}

/** A request where exactly this field is set to a non-zero value, in the message that holds it. */
function requestWith(desc: DescMessage, field: DescField): MessageInitShape<typeof SendMessageRequestSchema> {
  let value: unknown;
  switch (field.fieldKind) {
    case "scalar":
      value = field.scalar === ScalarType.STRING ? "x" : field.scalar === ScalarType.BYTES ? new Uint8Array([1]) : field.scalar === ScalarType.BOOL ? true : 5;
      break;
    case "enum":
      value = 1;
      break;
    case "list":
      value = field.listKind === "message" ? [create(field.message)] : ["a", "b"];
      break;
    case "message":
      value = field.message.typeName === "google.protobuf.Struct" ? { k: "v" } : create(field.message);
      break;
    default:
      throw new Error(`no sample for ${field.fieldKind}`);
  }
  const init = field.oneof ? { [field.oneof.localName]: { case: field.localName, value } } : { [field.localName]: value };
  switch (desc.typeName) {
    case SendMessageRequestSchema.typeName:
      return init;
    case SendMessageConfigurationSchema.typeName:
      return { configuration: init };
    case MessageSchema.typeName:
      return { message: init };
    case PartSchema.typeName:
      return { message: { parts: [init as MessageInitShape<typeof PartSchema>] } };
  }
  throw new Error(`unexpected ${desc.typeName}`);
}

// ---- the random generator ----

type Random = () => number;

/** A small seeded PRNG, so a failure can be replayed. */
function mulberry32(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (random: Random, below: number) => Math.floor(random() * below);
const chance = (random: Random, p: number) => random() < p;
const pick = <T>(random: Random, items: readonly T[]): T => items[int(random, items.length)]!;
const ALPHABET = ["a", "b", "Z", "0", " ", "-", "é", "ß", "日", "本", "🎉", "👍🏽", "\u0000", "\u007f", "\u00a0", "\uffff"];

function randomString(random: Random): string {
  if (chance(random, 0.2)) return "";
  const length = chance(random, 0.05) ? 60 + int(random, 200) : int(random, 12);
  let out = "";
  for (let i = 0; i < length; i++) out += pick(random, ALPHABET);
  return out;
}

const strings = (random: Random) => Array.from({ length: chance(random, 0.6) ? 0 : 1 + int(random, 3) }, () => randomString(random));

function randomPart(random: Random, outside: () => boolean): MessageInitShape<typeof PartSchema> {
  const part: MessageInitShape<typeof PartSchema> = {};
  switch (outside() ? 4 : int(random, 4)) {
    case 0:
      part.content = { case: "text", value: randomString(random) };
      break;
    case 1:
      part.content = { case: "url", value: randomString(random) };
      break;
    case 2:
      part.content = { case: "raw", value: new Uint8Array(int(random, 40)).map(() => int(random, 256)) };
      break;
    case 3:
      break; // no content
    case 4:
      part.content = { case: "data", value: create(ValueSchema, { kind: { case: "numberValue", value: random() } }) };
      break;
  }
  if (chance(random, 0.3)) part.filename = randomString(random);
  if (chance(random, 0.3)) part.mediaType = randomString(random);
  if (outside()) part.metadata = { k: randomString(random) };
  return part;
}

/** A random request; `fast` is false when it holds something outside the decoder's shape. */
function randomRequest(random: Random): { init: MessageInitShape<typeof SendMessageRequestSchema>; fast: boolean } {
  // About a quarter of the requests get one or more things the decoder must decline.
  const wantOutside = chance(random, 0.25);
  let fast = true;
  const outside = () => {
    const yes = wantOutside && chance(random, 0.15);
    if (yes) fast = false;
    return yes;
  };
  const init: MessageInitShape<typeof SendMessageRequestSchema> = {};
  if (chance(random, 0.3)) init.tenant = randomString(random);
  if (chance(random, 0.9)) {
    const roles = [Role.USER, Role.AGENT, Role.UNSPECIFIED, 3, -1, 1 << 30];
    init.message = {
      messageId: randomString(random),
      contextId: chance(random, 0.5) ? randomString(random) : "",
      taskId: chance(random, 0.3) ? randomString(random) : "",
      role: pick(random, roles) as Role,
      parts: Array.from({ length: int(random, 5) }, () => randomPart(random, outside)),
      extensions: strings(random),
      referenceTaskIds: strings(random),
    };
    if (outside()) init.message.metadata = { n: 1, nested: { list: [1, "two", null] } };
    if (outside()) init.message = withUnknown(create(MessageSchema, init.message), 9 + int(random, 1000), WireType.Varint, int(random, 128));
  }
  if (chance(random, 0.5)) {
    init.configuration = { acceptedOutputModes: strings(random), returnImmediately: chance(random, 0.5) };
    if (chance(random, 0.5)) init.configuration.historyLength = pick(random, [0, 1, 5, 100, -1, -2147483648, 2147483647, int(random, 1 << 20)]);
    if (outside()) init.configuration.taskPushNotificationConfig = { url: "https://example.com/hook", taskId: randomString(random) };
  }
  if (outside()) init.metadata = { trace: randomString(random) };
  if (wantOutside && fast) {
    // Make sure the request really is outside: an unknown field at the top.
    fast = false;
    const unknown = create(SendMessageRequestSchema, init);
    unknown.$unknown = [{ no: 5 + int(random, 100), wireType: WireType.LengthDelimited, data: new BinaryWriter().string(randomString(random)).finish() }];
    return { init: unknown, fast };
  }
  return { init, fast };
}

/** One to three random edits: overwrite, insert, delete, truncate, or repeat a slice. */
function mutate(bytes: Uint8Array, random: Random): Uint8Array {
  let out = Array.from(bytes);
  const edits = 1 + int(random, 3);
  for (let e = 0; e < edits; e++) {
    const at = int(random, out.length + 1);
    switch (int(random, 6)) {
      case 0:
        if (out.length > 0) out[Math.min(at, out.length - 1)] = int(random, 256);
        break;
      case 1:
        out.splice(at, 0, int(random, 256));
        break;
      case 2:
        out.splice(at, 1);
        break;
      case 3:
        out = out.slice(0, at);
        break;
      case 4: {
        const from = int(random, out.length + 1);
        out.splice(at, 0, ...out.slice(from, from + int(random, 8)));
        break;
      }
      case 5:
        // A small change to a byte keeps most structure: often still a valid request.
        if (out.length > 0) out[Math.min(at, out.length - 1)] ^= 1 << int(random, 3);
        break;
    }
  }
  return new Uint8Array(out);
}
