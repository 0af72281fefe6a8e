/**
 * Issue 33 finding 6 (A-28, R-PUSHD-7): IPv6 spellings of internal IPv4 addresses are refused at
 * creation (the URL as written) and at connection (every resolved address, through an injected
 * resolver). Proven by the guard's own decision and by the sender's refusal before any socket:
 * nothing here connects anywhere.
 */
import { DestinationGuard, DestinationRefusedError } from "../../src/push/destination-guard.js";
import { embeddedIPv4, ipv6Bytes } from "../../src/push/embedded-ipv4.js";
import { WebhookSender } from "../../src/push/webhook-sender.js";

const noDns = async () => {
  throw new Error("no DNS in this test");
};
const strict = new DestinationGuard({ allowHosts: [], allowHttp: false }, noDns);

/** Internal IPv4 addresses, spelled in every IPv6 form that embeds IPv4. */
const SPELLINGS: ReadonlyArray<[string, string]> = [
  ["IPv4-compatible loopback", "::127.0.0.1"],
  ["IPv4-compatible metadata", "::169.254.169.254"],
  ["IPv4-compatible, hex", "::7f00:1"],
  ["IPv4-compatible, full form", "0:0:0:0:0:0:a9fe:a9fe"],
  ["SIIT loopback", "::ffff:0:7f00:1"],
  ["SIIT metadata, dotted", "::ffff:0:169.254.169.254"],
  ["IPv4-mapped, full form", "0:0:0:0:0:ffff:7f00:1"],
  ["NAT64 loopback", "64:ff9b::127.0.0.1"],
  ["NAT64 metadata", "64:ff9b::a9fe:a9fe"],
  ["NAT64 local-use /96", "64:ff9b:1::a00:1"],
  ["NAT64 local-use /48", "64:ff9b:1:a00:1::"],
  ["6to4 private", "2002:c0a8:101::1"],
  ["6to4 metadata", "2002:a9fe:a9fe::"],
  ["Teredo, client loopback (obfuscated)", "2001:0:808:808:0:0:80ff:fffe"],
  ["Teredo, server private", "2001:0:a00:1::1"],
];

describe("issue 33 finding 6 / A-28: IPv6 forms embedding an internal IPv4 address", () => {
  test.each(SPELLINGS)("R-PUSHD-7: at creation, %s ([%s]) is refused", (_what, address) => {
    expect(strict.checkUrl(`https://[${address}]/hook`)).toMatch(/must not/);
  });

  test("the three spellings of the finding are refused at creation", () => {
    for (const url of ["https://[::127.0.0.1]/", "https://[::169.254.169.254]/", "https://[::ffff:0:7f00:1]/"]) {
      expect(strict.checkUrl(url)).toMatch(/IPv4-compatible|SIIT/);
    }
  });

  test.each(SPELLINGS)("R-PUSHD-7: at connection, a name resolving to %s (%s) is refused", async (_what, address) => {
    const guard = new DestinationGuard({ allowHosts: [], allowHttp: false }, async () => [{ address, family: 6 }]);
    await expect(guard.vet("evil.example")).rejects.toThrow(DestinationRefusedError);
  });

  test("an allowed NAT64 or 6to4 range lets public IPv4 through but never the internal IPv4 it embeds", () => {
    const guard = new DestinationGuard({ allowHosts: ["64:ff9b::/96", "2002::/16"], allowHttp: false }, noDns);
    expect(guard.checkAddress("64:ff9b::808:808", 6)).toBeUndefined(); // 8.8.8.8 through the operator's NAT64
    expect(guard.checkAddress("2002:808:808::1", 6)).toBeUndefined();
    expect(guard.checkAddress("64:ff9b::a00:1", 6)).toMatch(/NAT64.*IPv4/);
    expect(guard.checkAddress("2002:7f00:1::1", 6)).toMatch(/6to4.*IPv4/);
  });

  test("an IPv4 network the operator allowed is allowed in any spelling; plain IPv6 and ::1 are judged as before", () => {
    const guard = new DestinationGuard({ allowHosts: ["127.0.0.1", "::1"], allowHttp: true }, noDns);
    expect(guard.checkAddress("::ffff:127.0.0.1", 6)).toBeUndefined();
    expect(guard.checkAddress("::1", 6)).toBeUndefined();
    expect(guard.checkAddress("::127.0.0.2", 6)).toMatch(/IPv4-compatible/);
    expect(strict.checkUrl("https://[2001:4860:4860::8888]/x")).toBeUndefined();
    expect(strict.checkUrl("https://[::1]/x")).toMatch(/must not/);
  });

  test("the IPv4 an address carries, in each form", () => {
    expect(embeddedIPv4("::127.0.0.1")).toEqual({ form: "IPv4-compatible", addresses: ["127.0.0.1"] });
    expect(embeddedIPv4("::ffff:0:7f00:1")).toEqual({ form: "SIIT", addresses: ["127.0.0.1"] });
    expect(embeddedIPv4("::ffff:7f00:1")).toEqual({ form: "IPv4-mapped", addresses: ["127.0.0.1"] });
    expect(embeddedIPv4("2002:a9fe:a9fe::")).toEqual({ form: "6to4", addresses: ["169.254.169.254"] });
    expect(embeddedIPv4("2001:0:808:808::80ff:fffe")?.addresses).toEqual(["8.8.8.8", "127.0.0.1"]);
    expect(embeddedIPv4("::1")).toBeUndefined();
    expect(embeddedIPv4("2001:4860:4860::8888")).toBeUndefined();
    expect(ipv6Bytes("fe80::1%eth0")?.[15]).toBe(1);
    expect(ipv6Bytes("10.0.0.1")).toBeUndefined();
  });

  test("the sender refuses such a literal, and such a resolved address, before any connection", async () => {
    const resolved: string[] = [];
    const guard = new DestinationGuard({ allowHosts: [], allowHttp: true }, async (host) => {
      resolved.push(host);
      return [{ address: "::ffff:0:7f00:1", family: 6 }];
    });
    const sender = new WebhookSender({ guard, timeoutMs: 2000 });
    try {
      const literal = await sender.send({ url: "http://[::127.0.0.1]:9/hook", headers: {}, body: "{}" });
      expect(literal).toEqual({ kind: "refused", reason: expect.stringMatching(/IPv4-compatible/) });
      const named = await sender.send({ url: "http://siit.example:9/hook", headers: {}, body: "{}" });
      expect(named).toEqual({ kind: "refused", reason: expect.stringMatching(/SIIT/) });
      expect(resolved).toEqual(["siit.example"]);
    } finally {
      await sender.close();
    }
  });
});
