import { isIPv6 } from "node:net";

/**
 * IPv6 addresses that carry an IPv4 address (issue 33 finding 6): each is a way to spell an
 * internal IPv4 address past a guard that judges only IPv6 ranges. The destination guard judges
 * the IPv4 addresses they carry.
 */
export type EmbeddingForm = "IPv4-mapped" | "IPv4-compatible" | "SIIT" | "NAT64" | "6to4" | "Teredo";

export interface EmbeddedIPv4 {
  readonly form: EmbeddingForm;
  /** Every IPv4 address the form may carry (NAT64 local prefixes have several layouts; Teredo has two). */
  readonly addresses: readonly string[];
}

/**
 * The IPv4 addresses an IPv6 address carries, or undefined. Forms: IPv4-mapped `::ffff:0:0/96`,
 * IPv4-compatible `::/96` (but `::` and `::1`), SIIT `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96`
 * (RFC 6052) and `64:ff9b:1::/48` (RFC 8215, every RFC 6052 layout from /48 on), 6to4
 * `2002::/16`, Teredo `2001::/32` (server and de-obfuscated client address).
 */
export function embeddedIPv4(address: string): EmbeddedIPv4 | undefined {
  const b = ipv6Bytes(address);
  if (b === undefined) return undefined;
  const v4 = (...at: number[]) => at.map((i) => b[i]).join(".");
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  const last = v4(12, 13, 14, 15);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return { form: "IPv4-mapped", addresses: [last] };
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return { form: "SIIT", addresses: [last] };
  if (zero(0, 12) && !(zero(12, 15) && b[15]! <= 1)) return { form: "IPv4-compatible", addresses: [last] };
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) {
    if (zero(4, 12)) return { form: "NAT64", addresses: [last] };
    if (b[4] === 0 && b[5] === 1) return { form: "NAT64", addresses: [v4(6, 7, 9, 10), v4(7, 9, 10, 11), v4(9, 10, 11, 12), last] };
  }
  if (b[0] === 0x20 && b[1] === 0x02) return { form: "6to4", addresses: [v4(2, 3, 4, 5)] };
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0) {
    const client = [12, 13, 14, 15].map((i) => b[i]! ^ 0xff).join(".");
    return { form: "Teredo", addresses: [v4(4, 5, 6, 7), client] };
  }
  return undefined;
}

/** The 16 bytes of an IPv6 address in any spelling (compressed, full, trailing dotted quad, zone id); undefined if it is none. */
export function ipv6Bytes(address: string): Uint8Array | undefined {
  const text = address.replace(/%.*$/, "");
  if (!isIPv6(text)) return undefined;
  const groups: number[] = [];
  const parse = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const piece of part.split(":")) {
      if (piece.includes(".")) {
        const [a, b, c, d] = piece.split(".").map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(piece, 16));
    }
    return out;
  };
  const gap = text.indexOf("::");
  if (gap === -1) groups.push(...parse(text));
  else {
    const head = parse(text.slice(0, gap));
    const tail = parse(text.slice(gap + 2));
    groups.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail);
  }
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}
