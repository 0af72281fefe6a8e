/**
 * decodeSendMessageRequest (src/codec/send-request-decoder.ts) against protobuf-es's
 * fromBinary(SendMessageRequestSchema, …). Run: node --import tsx bench/send-request-decoder.ts [decodes-per-round]
 *
 * Two requests: issue3's benchmark request (message id, role USER, one short text part) and one
 * with a UUID context id and three text parts. Both decoded from a Buffer, as grpc-js hands it
 * over, with the text encoding the server installs at start. Rounds alternate between the two
 * decoders and the best round of each counts, since the machine's cores are shared; read the
 * ratio, not the absolute figures.
 */
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, PartSchema, Role, SendMessageRequestSchema, type SendMessageRequest } from "../gen/es/lf/a2a/v1/a2a_pb.js";
import { installProtobufTextEncoding } from "../src/protocol/protobuf-text-encoding.js";
import { decodeSendMessageRequest } from "../src/codec/send-request-decoder.js";

const perRound = Number(process.argv[2] ?? 50_000);
const rounds = 7;

const text = (value: string) => create(PartSchema, { content: { case: "text", value } });
const request = (init: Parameters<typeof create<typeof MessageSchema>>[1]) =>
  Buffer.from(toBinary(SendMessageRequestSchema, create(SendMessageRequestSchema, { message: create(MessageSchema, init) })));

const requests: Array<[string, Buffer]> = [
  ["benchmark request (1 text part)     ", request({ messageId: "bench-message-1", role: Role.USER, parts: [text("What is 2 + 2?")] })],
  [
    "UUID context id and 3 text parts    ",
    request({
      messageId: randomUUID(),
      contextId: randomUUID(),
      role: Role.USER,
      parts: [text("What is 2 + 2?"), text("Please show your working."), text("Answer in one line.")],
    }),
  ],
];

/** Best µs per decode over the rounds. */
function time(decode: (bytes: Buffer) => SendMessageRequest | undefined, bytes: Buffer): number {
  const start = process.hrtime.bigint();
  let parts = 0;
  for (let i = 0; i < perRound; i++) parts += decode(bytes)!.message!.parts.length;
  const micros = Number(process.hrtime.bigint() - start) / 1000 / perRound;
  if (parts === 0) throw new Error("nothing decoded");
  return micros;
}

installProtobufTextEncoding();
const viaFromBinary = (bytes: Buffer) => fromBinary(SendMessageRequestSchema, bytes);
console.log(`${rounds} rounds of ${perRound} decodes, best round, server text encoding`);
for (const [label, bytes] of requests) {
  if (!isDeepStrictEqual(decodeSendMessageRequest(bytes), viaFromBinary(bytes))) throw new Error(`${label.trim()}: decoder differs from fromBinary`);
  for (let i = 0; i < 2; i++) time(viaFromBinary, bytes), time(decodeSendMessageRequest, bytes); // warm-up
  let reflective = Infinity;
  let fast = Infinity;
  for (let i = 0; i < rounds; i++) {
    reflective = Math.min(reflective, time(viaFromBinary, bytes));
    fast = Math.min(fast, time(decodeSendMessageRequest, bytes));
  }
  console.log(
    `${label} ${bytes.byteLength} bytes: fromBinary ${reflective.toFixed(2)} µs, decodeSendMessageRequest ${fast.toFixed(2)} µs, ${(reflective / fast).toFixed(1)}x faster`,
  );
}
