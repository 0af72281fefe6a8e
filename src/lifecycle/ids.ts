import { randomFillSync } from "node:crypto";

/**
 * Random (version 4) UUIDs for the ids the server makes: tasks, contexts, artifacts, messages.
 *
 * Why not crypto.randomUUID(): Node builds its result by concatenating 20 pieces, ~600 bytes of
 * garbage per id, and a call makes three or more ids. Here the random bytes come from the same
 * CSPRNG in batches, and each id is written as ASCII into a scratch buffer and read out as one
 * flat 36-character string.
 */
const BATCH = 256;
const random = Buffer.alloc(16 * BATCH);
let next = BATCH;
const text = Buffer.alloc(36);
/** The two ASCII hex digits of each byte value: the high digit in the low 8 bits. */
const HEX = new Uint16Array(256);
const DIGITS = Buffer.from("0123456789abcdef", "latin1");
for (let b = 0; b < 256; b++) HEX[b] = DIGITS[b >> 4]! | (DIGITS[b & 15]! << 8);
/** Where each of the 16 bytes goes in the text form 8-4-4-4-12. */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
text[8] = text[13] = text[18] = text[23] = 0x2d; // "-"

export function newId(): string {
  if (next === BATCH) {
    randomFillSync(random);
    next = 0;
  }
  const offset = 16 * next++;
  random[offset + 6] = (random[offset + 6]! & 0x0f) | 0x40; // version 4
  random[offset + 8] = (random[offset + 8]! & 0x3f) | 0x80; // variant 10xx
  for (let i = 0; i < 16; i++) {
    const pair = HEX[random[offset + i]!]!;
    text[AT[i]!] = pair & 0xff;
    text[AT[i]! + 1] = pair >> 8;
  }
  return text.toString("latin1", 0, 36);
}
