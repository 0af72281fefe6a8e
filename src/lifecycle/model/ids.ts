import { randomFillSync } from "node:crypto";

/**
 * Time-ordered (version 7, RFC 9562) UUIDs for the ids the server makes: tasks, contexts,
 * artifacts, messages. 48 bits of Unix milliseconds, then a 12-bit sequence that keeps ids
 * made within one millisecond in order, then 62 random bits.
 *
 * Why time-ordered: a durable store indexes tasks by id and by context id, and a new random
 * key lands on a random page of each index, so every new task dirtied (and every commit wrote)
 * a page per index. Ids that grow with time append to the same few pages instead. The 62
 * random bits keep ids unguessable; access is checked against the caller's scope anyway.
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

/** The millisecond of the last id, and its sequence number within it. */
let lastMillis = 0;
let sequence = 0;
const SEQUENCE_LIMIT = 0xfff;

export function newId(): string {
  if (next === BATCH) {
    randomFillSync(random);
    next = 0;
  }
  const offset = 16 * next++;
  const now = Date.now();
  if (now > lastMillis) {
    lastMillis = now;
    sequence = random[offset]! & 0x3ff; // a random start, with room to count up within the millisecond
  } else if (++sequence > SEQUENCE_LIMIT) {
    lastMillis++; // more ids in one millisecond than the sequence holds: borrow the next one
    sequence = 0;
  }
  writeTimestamp(offset, lastMillis);
  random[offset + 6] = 0x70 | (sequence >> 8); // version 7
  random[offset + 7] = sequence & 0xff;
  random[offset + 8] = (random[offset + 8]! & 0x3f) | 0x80; // variant 10xx
  for (let i = 0; i < 16; i++) {
    const pair = HEX[random[offset + i]!]!;
    text[AT[i]!] = pair & 0xff;
    text[AT[i]! + 1] = pair >> 8;
  }
  return text.toString("latin1", 0, 36);
}

/** The 48-bit millisecond count, big-endian, into the id's first six bytes. */
function writeTimestamp(offset: number, millis: number): void {
  const high = Math.floor(millis / 0x1_0000_0000);
  const low = millis >>> 0;
  random[offset] = (high >>> 8) & 0xff;
  random[offset + 1] = high & 0xff;
  random[offset + 2] = low >>> 24;
  random[offset + 3] = (low >>> 16) & 0xff;
  random[offset + 4] = (low >>> 8) & 0xff;
  random[offset + 5] = low & 0xff;
}
