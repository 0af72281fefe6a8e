/** A call's peer as a span's `network.peer.address` and `network.peer.port`. */
export interface PeerAddress {
  readonly address: string;
  readonly port: number;
}

/**
 * Peers parsed into address and port, kept: the calls of one connection share their peer string,
 * and parsing it each time (a regular expression) was a visible part of a call's tracing cost.
 * Bounded: emptied when full.
 */
export class PeerCache {
  static readonly MAX = 1024;
  readonly #parsed = new Map<string, PeerAddress | undefined>();

  parse(peer: string): PeerAddress | undefined {
    const known = this.#parsed.get(peer);
    if (known !== undefined || this.#parsed.has(peer)) return known;
    if (this.#parsed.size >= PeerCache.MAX) this.#parsed.clear();
    const parsed = splitPeer(peer);
    this.#parsed.set(peer, parsed);
    return parsed;
  }
}

/** "127.0.0.1:5555", "[::1]:5555" → address and port; undefined for anything else ("unknown"). */
export function splitPeer(peer: string): PeerAddress | undefined {
  const colon = peer.lastIndexOf(":");
  const port = Number(peer.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port)) return undefined;
  return { address: peer.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port };
}
