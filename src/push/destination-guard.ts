import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { embeddedIPv4 } from "./embedded-ipv4.js";

/**
 * The destination guard (ruling A-28, R-PUSHD-7): a webhook may only reach the public
 * internet, unless the operator lets a host or network through (A2A_PUSH_ALLOW_HOSTS).
 * Checked twice: on the URL as written when a config is made (`checkUrl`), and on every
 * address a name resolves to when a delivery connects (`vet`), so that a name that resolved to
 * a public address yesterday and to 10.0.0.5 today (DNS rebinding) is refused then. The
 * sender connects to the address `vet` returned, never resolving again.
 */
export interface DestinationPolicy {
  /** Host names, IP addresses and CIDR ranges let through despite the guard. */
  readonly allowHosts: readonly string[];
  /** Plain http allowed (else https only). */
  readonly allowHttp: boolean;
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has. Injected in tests; DNS by default. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/** A refused destination: the reason, said without echoing more than the host. */
export class DestinationRefusedError extends Error {
  readonly code = "A2A_DESTINATION_REFUSED";
  constructor(reason: string) {
    super(reason);
    this.name = "DestinationRefusedError";
  }
}

const MAX_URL_LENGTH = 2048;

/**
 * Ranges no webhook may reach: loopback, private, link-local (metadata), CGNAT, multicast,
 * reserved, documentation; NAT64, 6to4 and Teredo (they embed IPv4). Not ::ffff:0:0/96: BlockList
 * matches IPv4 addresses against it (IPv6 forms that embed IPv4 are judged in checkAddress).
 */
const BLOCKED_V4: ReadonlyArray<[string, number]> = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const BLOCKED_V6: ReadonlyArray<[string, number]> = [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];

export class DestinationGuard {
  private readonly blocked = new BlockList();
  private readonly allowedNets = new BlockList();
  private readonly allowedNames: ReadonlySet<string>;

  constructor(
    private readonly policy: DestinationPolicy,
    private readonly resolver: Resolver = systemResolver,
  ) {
    for (const [net, prefix] of BLOCKED_V4) this.blocked.addSubnet(net, prefix, "ipv4");
    for (const [net, prefix] of BLOCKED_V6) this.blocked.addSubnet(net, prefix, "ipv6");
    const names = new Set<string>();
    for (const entry of policy.allowHosts) {
      const net = parseNetwork(entry);
      if (net === undefined) names.add(normalHost(entry));
      else this.allowedNets.addSubnet(net.address, net.prefix, net.family === 6 ? "ipv6" : "ipv4");
    }
    this.allowedNames = names;
  }

  /** A-28 at creation: why the URL is refused, or undefined. The URL's own form only (no DNS). */
  checkUrl(value: string): string | undefined {
    if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return "must be an absolute http(s) URL";
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && this.policy.allowHttp)) {
      return url.protocol === "http:" ? "must use https (plain http is not allowed by this server)" : "must be an https URL";
    }
    if (url.username !== "" || url.password !== "") return "must not carry credentials; use the config's authentication or token";
    const host = urlHost(url);
    if (host === "") return "must name a host";
    if (this.allowedNames.has(host)) return undefined;
    const family = isIP(host);
    if (family !== 0) return this.checkAddress(host, family === 6 ? 6 : 4);
    if (host === "localhost" || host.endsWith(".localhost")) return "must not point at this machine (localhost)";
    return undefined;
  }

  /**
   * Why an address is refused, or undefined. An IPv6 address that carries an IPv4 address
   * (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by the IPv4 it carries too: one
   * internal is a refusal even where the IPv6 range is let through (issue 33 finding 6).
   */
  checkAddress(address: string, family: 4 | 6): string | undefined {
    const type = family === 6 ? "ipv6" : "ipv4";
    const embedded = family === 6 ? embeddedIPv4(address) : undefined;
    if (embedded !== undefined) {
      const allowed = (v4: string) => this.allowedNets.check(v4, "ipv4");
      if (embedded.addresses.every(allowed)) return undefined;
      // Mapped, compatible and SIIT spellings reach no public host an IPv4 address would not: refused in any case.
      if (embedded.form === "IPv4-mapped" || embedded.form === "IPv4-compatible" || embedded.form === "SIIT") {
        return `must not be an ${embedded.form} IPv6 address; use the IPv4 address or a host name`;
      }
      if (embedded.addresses.some((v4) => !allowed(v4) && this.blocked.check(v4, "ipv4"))) {
        return `must not be a ${embedded.form} IPv6 address that carries a loopback, private, link-local, shared or reserved IPv4 address`;
      }
    }
    if (this.allowedNets.check(address, type)) return undefined;
    if (this.blocked.check(address, type)) {
      return "must not point at a loopback, private, link-local, shared or reserved address";
    }
    return undefined;
  }

  /**
   * A-28 at connection: the addresses of `hostname` a delivery may connect to, every one
   * resolved checked (one refused refuses all: a mixed answer is how rebinding is tried).
   * Throws DestinationRefusedError.
   */
  async vet(hostname: string): Promise<readonly ResolvedAddress[]> {
    const host = normalHost(hostname);
    const literal = await this.vetLiteral(host);
    if (literal !== undefined) return [literal];
    const addresses = await this.resolver(host);
    if (addresses.length === 0) throw new DestinationRefusedError(`the webhook host ${host} has no address`);
    if (this.allowedNames.has(host)) return addresses;
    for (const { address, family } of addresses) {
      const why = this.checkAddress(address, family);
      if (why !== undefined)
        throw new DestinationRefusedError(
          `the webhook host ${host} resolves to ${address}, which ${why.replace(/^must not point/, "is not allowed: it points")}`,
        );
    }
    return addresses;
  }

  /** An IP literal host, judged (throws DestinationRefusedError); undefined for a name. */
  async vetLiteral(hostname: string): Promise<ResolvedAddress | undefined> {
    const host = normalHost(hostname);
    const literal = isIP(host);
    if (literal === 0) return undefined;
    const family = literal === 6 ? 6 : 4;
    if (!this.allowedNames.has(host)) {
      const why = this.checkAddress(host, family);
      if (why !== undefined) throw new DestinationRefusedError(`the webhook address ${host} ${why}`);
    }
    return { address: host, family };
  }
}

/** `10.0.0.0/8`, `::1`, `127.0.0.1` as a network; undefined for a host name. */
export function parseNetwork(entry: string): { address: string; prefix: number; family: 4 | 6 } | undefined {
  const [address = "", prefixText, extra] = entry
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return undefined;
  const max = family === 6 ? 128 : 32;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) return undefined;
  return { address, prefix, family: family === 6 ? 6 : 4 };
}

/** The host as the URL parser canonicalised it (decimal, hex and octal IPv4 spellings become dotted quads), without brackets. */
function urlHost(url: URL): string {
  return normalHost(url.hostname);
}

function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}
