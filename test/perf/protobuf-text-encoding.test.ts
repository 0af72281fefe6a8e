import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, Role } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { checkUtf8, decodeUtf8, encodeUtf8, installProtobufTextEncoding } from "../../src/protocol/protobuf-text-encoding.js";

/* The fast string conversions protobuf-es is given must agree exactly with the standard API. */

const samples = [
  "",
  "a",
  "What is 2 + 2?",
  "0b7e3a54-6d0f-4c36-9a53-3a9b2f4f3c11",
  "\u007f\u0000\u0001",
  "x".repeat(64),
  "x".repeat(65),
  "y".repeat(1000),
  "é",
  "naïve café",
  "日本語のテキスト",
  "emoji 😀 here",
  "\ufeffstarts with a BOM",
  "lone \ud800 surrogate",
  "\udc00",
  "ascii then é".padEnd(70, "!"),
];

describe("protobuf text encoding fast paths", () => {
  const standardEncoder = new TextEncoder();
  const standardDecoder = new TextDecoder();
  const strictDecoder = new TextDecoder("utf-8", { fatal: true });

  it.each(samples.map((s) => [JSON.stringify(s), s]))("encodes %s to the same bytes as TextEncoder", (_label, text) => {
    expect(Buffer.from(encodeUtf8(text)).equals(Buffer.from(standardEncoder.encode(text)))).toBe(true);
  });

  it.each(samples.map((s) => [JSON.stringify(s), s]))("decodes the bytes of %s as TextDecoder does, lenient and strict", (_label, text) => {
    const bytes = standardEncoder.encode(text);
    expect(decodeUtf8(bytes)).toBe(standardDecoder.decode(bytes));
    expect(decodeUtf8(bytes, true)).toBe(strictDecoder.decode(bytes));
  });

  it.each(samples.map((s) => [JSON.stringify(s), s]))("checks %s as encodeURIComponent does", (_label, text) => {
    let expected = true;
    try {
      encodeURIComponent(text);
    } catch {
      expected = false;
    }
    expect(checkUtf8(text)).toBe(expected);
  });

  it("invalid UTF-8 is replaced when lenient and refused when strict, as TextDecoder does", () => {
    for (const bytes of [new Uint8Array([0x61, 0xff, 0x62]), new Uint8Array([0xc3]), new Uint8Array([0xed, 0xa0, 0x80])]) {
      expect(decodeUtf8(bytes)).toBe(standardDecoder.decode(bytes));
      expect(() => strictDecoder.decode(bytes)).toThrow();
      expect(() => decodeUtf8(bytes, true)).toThrow("not valid");
    }
  });

  it("messages encode to the same bytes and decode to the same values once installed", () => {
    const message = create(MessageSchema, {
      messageId: "m-1",
      role: Role.USER,
      parts: samples.filter(checkUtf8).map((value) => ({ content: { case: "text" as const, value } })),
    });
    const before = toBinary(MessageSchema, message);
    const decodedBefore = fromBinary(MessageSchema, before);
    installProtobufTextEncoding();
    const after = toBinary(MessageSchema, message);
    expect(Buffer.from(after).equals(Buffer.from(before))).toBe(true);
    // Same values as protobuf-es's own decoding (which, like TextDecoder, drops a leading BOM).
    expect(fromBinary(MessageSchema, after)).toEqual(decodedBefore);
  });
});
