/**
 * Append-only storage of small byte strings in large off-heap buffers, addressed by a number.
 *
 * Why: a settled task is a few hundred bytes that may never be read again. Kept on the V8 heap
 * (even as a compact string), it is interleaved with the short-lived garbage of the calls that
 * made it, and the heap pages it lands on stay about half empty: the process's RSS grew by ~2.5×
 * the bytes stored. In 1 MiB slabs the bytes lie back to back and cost the OS what they weigh.
 *
 * An entry is a 4-byte little-endian length, a one-byte header and its bytes. Its address is
 * slab index × SLAB_BYTES + offset: a number, kept in a typed-array column by whoever points to it.
 * Space is reclaimed a whole slab at a time, once every entry in it has been released; the slab
 * being filled is never freed. Slabs of tasks released in any order may stay partly used: settled
 * tasks rarely change, and purges (retention) release the oldest, which sit together.
 */
export const SLAB_BYTES = 1 << 20;
const LENGTH_BYTES = 4;
/** Headers of string entries: how the chars are stored. */
const STRING_LATIN1 = 0;
const STRING_UTF16 = 1;

function isWide(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return true;
  return false;
}

export class ByteSlabs {
  private readonly slabs: Array<Buffer | undefined> = [];
  /** Bytes of entries still held, per slab. */
  private readonly held: number[] = [];
  private readonly freeIndexes: number[] = [];
  private current = -1;
  private fill = SLAB_BYTES;

  /** Stores `bytes` behind a one-byte `header`; returns the entry's address. */
  append(header: number, bytes: Uint8Array): number {
    const address = this.reserve(header, bytes.byteLength);
    const { buffer, offset } = this.locate(address);
    buffer.set(bytes, offset + LENGTH_BYTES + 1);
    return address;
  }

  /**
   * Stores a JS string exactly (any UTF-16 content, lone surrogates included, so two
   * different strings never store alike): one byte a char when every char is below 256,
   * else two (UTF-16LE). Why not UTF-8: UTF-8 would merge lone surrogates, and a UUID
   * costs the same in both.
   */
  appendString(s: string): number {
    const wide = isWide(s);
    const address = this.reserve(wide ? STRING_UTF16 : STRING_LATIN1, wide ? 2 * s.length : s.length);
    const { buffer, offset } = this.locate(address);
    buffer.write(s, offset + LENGTH_BYTES + 1, wide ? "utf16le" : "latin1");
    return address;
  }

  /** True when the entry at `address` (stored by appendString) is `s`; no allocation. */
  stringEquals(address: number, s: string): boolean {
    const { buffer, offset } = this.locate(address);
    const bytes = buffer.readUInt32LE(offset) - 1;
    const start = offset + LENGTH_BYTES + 1;
    if (buffer[offset + LENGTH_BYTES] === STRING_LATIN1) {
      if (bytes !== s.length) return false;
      for (let i = 0; i < bytes; i++) if (buffer[start + i] !== s.charCodeAt(i)) return false;
      return true;
    }
    if (bytes !== 2 * s.length) return false;
    for (let i = 0; i < s.length; i++) {
      if ((buffer[start + 2 * i]! | (buffer[start + 2 * i + 1]! << 8)) !== s.charCodeAt(i)) return false;
    }
    return true;
  }

  /** The string stored by appendString at `address`. */
  readString(address: number): string {
    const { buffer, offset } = this.locate(address);
    const start = offset + LENGTH_BYTES + 1;
    const end = start + buffer.readUInt32LE(offset) - 1;
    return buffer.toString(buffer[offset + LENGTH_BYTES] === STRING_LATIN1 ? "latin1" : "utf16le", start, end);
  }

  /** The entry's header byte. */
  header(address: number): number {
    const { buffer, offset } = this.locate(address);
    return buffer[offset + LENGTH_BYTES]!;
  }

  /** A fresh copy of the entry's bytes (after the header): nothing aliases the slab. */
  copy(address: number): Uint8Array {
    const { buffer, offset } = this.locate(address);
    const length = buffer.readUInt32LE(offset);
    const start = offset + LENGTH_BYTES + 1;
    return Uint8Array.prototype.slice.call(buffer, start, start + length - 1);
  }

  /** The entry is no longer needed; its slab is freed once all of its entries are. */
  release(address: number): void {
    const { slab, buffer, offset } = this.locate(address);
    this.held[slab]! -= LENGTH_BYTES + buffer.readUInt32LE(offset);
    if (this.held[slab] === 0 && slab !== this.current) this.freeSlab(slab);
  }

  /** Slabs allocated now, and the bytes they reserve: what the memory tests watch. */
  get footprint(): { slabs: number; bytes: number } {
    let slabs = 0;
    let bytes = 0;
    for (const s of this.slabs) {
      if (s === undefined) continue;
      slabs++;
      bytes += s.byteLength;
    }
    return { slabs, bytes };
  }

  clear(): void {
    this.slabs.length = 0;
    this.held.length = 0;
    this.freeIndexes.length = 0;
    this.current = -1;
    this.fill = SLAB_BYTES;
  }

  /** Room for an entry of `length` bytes behind `header`; returns its address (bytes to be written by the caller). */
  private reserve(header: number, length: number): number {
    const size = LENGTH_BYTES + 1 + length;
    let slab: number;
    let offset: number;
    if (size > SLAB_BYTES) {
      slab = this.newSlab(size); // an oversized entry gets a slab of its own
      offset = 0;
    } else {
      if (this.fill + size > SLAB_BYTES) {
        const full = this.current;
        this.current = this.newSlab(SLAB_BYTES);
        this.fill = 0;
        if (full >= 0 && this.held[full] === 0) this.freeSlab(full);
      }
      slab = this.current;
      offset = this.fill;
      this.fill += size;
    }
    const buffer = this.slabs[slab]!;
    buffer.writeUInt32LE(length + 1, offset);
    buffer[offset + LENGTH_BYTES] = header;
    this.held[slab]! += size;
    return slab * SLAB_BYTES + offset;
  }

  private locate(address: number): { slab: number; buffer: Buffer; offset: number } {
    const slab = Math.floor(address / SLAB_BYTES);
    const buffer = this.slabs[slab];
    if (buffer === undefined) throw new Error(`no slab holds address ${address}`);
    return { slab, buffer, offset: address - slab * SLAB_BYTES };
  }

  private newSlab(size: number): number {
    // allocUnsafeSlow: a buffer of its own, outside Node's shared pool; unused pages cost no RSS.
    const buffer = Buffer.allocUnsafeSlow(size);
    const index = this.freeIndexes.pop() ?? this.slabs.length;
    this.slabs[index] = buffer;
    this.held[index] = 0;
    return index;
  }

  private freeSlab(index: number): void {
    this.slabs[index] = undefined;
    this.held[index] = 0;
    this.freeIndexes.push(index);
  }
}
