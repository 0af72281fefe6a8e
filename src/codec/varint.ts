/** Bytes of `value` (a non-negative length or count below 2^35) as a protobuf varint. */
export function varintSize(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** Writes `value` (as varintSize takes it) into `out` at `at` as a protobuf varint; the offset after it. */
export function writeVarint(out: Uint8Array, at: number, value: number): number {
  let n = value;
  while (n > 0x7f) {
    out[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[at++] = n;
  return at;
}
