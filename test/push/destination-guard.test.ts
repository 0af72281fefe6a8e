/**
 * The destination guard's own decisions (A-28, R-PUSHD-7), proven without any connection: at
 * creation on the URL as written, at connection on every resolved address (an injected
 * resolver; the real DNS is never asked). Nothing here opens a socket.
 */
import { DestinationGuard, DestinationRefusedError, type ResolvedAddress } from "../../src/push/destination-guard.js";
import { nextAttemptDelay, parseRetryAfter, verdictOf } from "../../src/push/retry-schedule.js";
import { TenantHmacSigner, parseSigningSecret, signatureHeaders, tenantSigningSecret } from "../../src/push/signature.js";
import { createHmac } from "node:crypto";

const strict = new DestinationGuard({ allowHosts: [], allowHttp: false }, async () => {
  throw new Error("no DNS in this test");
});

describe("A-28 at creation: the URL as written", () => {
  test.each([
    "https://127.0.0.1/",
    "https://127.1.2.3/",
    "https://[::1]/",
    "https://localhost/",
    "https://api.localhost/",
    "https://LOCALHOST./",
    "https://10.0.0.1/",
    "https://172.16.0.1/",
    "https://172.31.255.255/",
    "https://192.168.0.1/",
    "https://169.254.169.254/",
    "https://169.254.0.1/",
    "https://100.64.0.1/",
    "https://100.127.255.254/",
    "https://0.0.0.0/",
    "https://224.0.0.251/",
    "https://255.255.255.255/",
    "https://[::]/",
    "https://[fe80::1]/",
    "https://[fc00::1]/",
    "https://[ff02::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[::ffff:169.254.169.254]/",
    "https://[::ffff:8.8.8.8]/",
    "https://2130706433/",
    "https://0x7f000001/",
    "https://0x7f.0.0.1/",
    "https://0177.0.0.1/",
    "https://017700000001/",
    "https://3232235777/",
    "https://[64:ff9b::a00:1]/",
    "https://[2002:a00:1::]/",
  ])("R-PUSHD-7: %s is refused", (url) => {
    expect(strict.checkUrl(url)).toMatch(/must/);
  });

  test.each(["https://hooks.example/a2a", "https://8.8.8.8/x", "https://[2001:4860:4860::8888]/x", "https://hooks.example:8443/x?y=1"])(
    "%s is accepted",
    (url) => {
      expect(strict.checkUrl(url)).toBeUndefined();
    },
  );

  test("plain http only where allowed; credentials in the URL never; length bounded", () => {
    expect(strict.checkUrl("http://hooks.example/x")).toMatch(/https/);
    expect(new DestinationGuard({ allowHosts: [], allowHttp: true }).checkUrl("http://hooks.example/x")).toBeUndefined();
    expect(strict.checkUrl("https://u:p@hooks.example/x")).toMatch(/credentials/);
    expect(strict.checkUrl(`https://hooks.example/${"a".repeat(2048)}`)).toMatch(/2048/);
  });

  test("A2A_PUSH_ALLOW_HOSTS lets named hosts, addresses and CIDR ranges through", () => {
    const open = new DestinationGuard({ allowHosts: ["127.0.0.1", "::1", "localhost", "10.0.0.0/8"], allowHttp: true });
    for (const url of ["http://127.0.0.1:9/x", "http://[::1]:9/x", "http://localhost:9/x", "http://10.9.8.7/x", "http://[::ffff:127.0.0.1]/x"]) {
      expect(open.checkUrl(url)).toBeUndefined();
    }
    expect(open.checkUrl("http://127.0.0.2/x")).toMatch(/must/);
    expect(open.checkUrl("http://192.168.1.1/x")).toMatch(/must/);
  });
});

describe("A-28 at connection: every resolved address, decided before any connection", () => {
  const resolverOf = (answers: ResolvedAddress[][]) => {
    let call = 0;
    return async () => answers[Math.min(call++, answers.length - 1)]!;
  };

  test("DNS rebinding: a name that resolves first to a public address, then to a private one, is refused the second time", async () => {
    const guard = new DestinationGuard(
      { allowHosts: [], allowHttp: false },
      resolverOf([[{ address: "93.184.216.34", family: 4 }], [{ address: "10.0.0.7", family: 4 }]]),
    );
    expect(guard.checkUrl("https://rebind.example/x")).toBeUndefined(); // a name: judged at connection
    await expect(guard.vet("rebind.example")).resolves.toEqual([{ address: "93.184.216.34", family: 4 }]);
    await expect(guard.vet("rebind.example")).rejects.toBeInstanceOf(DestinationRefusedError);
  });

  test.each([
    ["metadata", "169.254.169.254", 4],
    ["loopback", "127.0.0.1", 4],
    ["CGNAT", "100.64.1.1", 4],
    ["private", "192.168.10.1", 4],
    ["IPv4-mapped loopback", "::ffff:127.0.0.1", 6],
    ["IPv6 loopback", "::1", 6],
    ["IPv6 link-local", "fe80::1", 6],
  ] as const)("a name resolving to %s (%s) is refused", async (_what, address, family) => {
    const guard = new DestinationGuard({ allowHosts: [], allowHttp: false }, async () => [{ address, family }]);
    await expect(guard.vet("evil.example")).rejects.toThrow(/resolves to/);
  });

  test("one private address among public ones refuses the name (a mixed answer is how rebinding is tried)", async () => {
    const guard = new DestinationGuard({ allowHosts: [], allowHttp: false }, async () => [
      { address: "8.8.8.8", family: 4 },
      { address: "10.0.0.1", family: 4 },
    ]);
    await expect(guard.vet("mixed.example")).rejects.toBeInstanceOf(DestinationRefusedError);
  });

  test("a literal address is judged without asking the resolver; an allowed name passes whatever it resolves to", async () => {
    const calls: string[] = [];
    const guard = new DestinationGuard(
      { allowHosts: ["receiver.test", "127.0.0.1"], allowHttp: true },
      async (h) => (calls.push(h), [{ address: "127.0.0.1", family: 4 }]),
    );
    await expect(guard.vet("10.0.0.1")).rejects.toBeInstanceOf(DestinationRefusedError);
    await expect(guard.vet("127.0.0.1")).resolves.toEqual([{ address: "127.0.0.1", family: 4 }]);
    await expect(guard.vet("receiver.test")).resolves.toEqual([{ address: "127.0.0.1", family: 4 }]);
    expect(calls).toEqual(["receiver.test"]);
  });
});

describe("A-29 / A-12 policies", () => {
  test("A-29: 2xx delivered; 410 removes; 408, 429, 5xx and 3xx retried; other 4xx given up", () => {
    expect([200, 204, 299].map(verdictOf)).toEqual(["delivered", "delivered", "delivered"]);
    expect(verdictOf(410)).toBe("remove");
    expect([408, 429, 500, 503, 301, 302, 307].map(verdictOf)).toEqual(Array(7).fill("retry"));
    expect([400, 401, 403, 404, 413].map(verdictOf)).toEqual(Array(5).fill("give-up"));
  });

  test("A-12: exponential backoff with jitter, capped; Retry-After waited for; bounded by attempts and age", () => {
    const policy = { maxAttempts: 5, backoffMs: 100, maxBackoffMs: 1000, maxAgeMs: 60_000 };
    expect([1, 2, 3, 4].map((n) => nextAttemptDelay(policy, n, 0, undefined, () => 1))).toEqual([100, 200, 400, 800]);
    expect(nextAttemptDelay(policy, 1, 0, undefined, () => 0)).toBe(50);
    expect(nextAttemptDelay({ ...policy, maxAttempts: 20 }, 10, 0, undefined, () => 1)).toBe(1000);
    expect(nextAttemptDelay(policy, 1, 0, 5000, () => 1)).toBe(5000);
    expect(nextAttemptDelay(policy, 5, 0, undefined)).toBeUndefined();
    expect(nextAttemptDelay(policy, 1, 59_990, undefined, () => 1)).toBeUndefined();
    expect(parseRetryAfter("3", 0)).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
  });

  test("A-29: Standard Webhooks signature = v1, base64 HMAC-SHA256 of id.timestamp.body with the tenant's secret's bytes", () => {
    const root = parseSigningSecret(`whsec_${Buffer.alloc(32, 7).toString("base64")}`);
    const headers = signatureHeaders("msg_1", 1700000000, '{"a":1}', new TenantHmacSigner(root), "acme");
    const expected = createHmac("sha256", tenantSigningSecret(Buffer.alloc(32, 7), "acme"))
      .update('msg_1.1700000000.{"a":1}')
      .digest("base64");
    expect(headers).toEqual({ "webhook-id": "msg_1", "webhook-timestamp": "1700000000", "webhook-signature": `v1,${expected}` });
    expect(signatureHeaders("msg_1", 1, "", undefined)).toEqual({ "webhook-id": "msg_1", "webhook-timestamp": "1" });
    expect(() => parseSigningSecret("plain-secret")).toThrow(/whsec_/);
    expect(() => parseSigningSecret("whsec_c2hvcnQ=")).toThrow(/24 to 64/);
  });
});
