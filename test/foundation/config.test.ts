import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, describeConfig, loadConfig, SETTINGS, wantsHelp, type ConfigSources } from "../../src/config/index.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { makeTestPki, type TestPki } from "./certs.js";

const load = (sources: ConfigSources = {}) => loadConfig({ argv: [], env: {}, cwd: "/srv/a2a", ...sources });

/** The ConfigError message a load throws. */
function errorOf(sources: ConfigSources): string {
  try {
    load(sources);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).message).not.toContain("\n");
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
}

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});
afterAll(() => pki.remove());

describe("configuration", () => {
  test("FND-CONFIG: documented defaults", () => {
    expect(load()).toEqual({
      listen: "127.0.0.1:50051",
      tls: null,
      maxMessageBytes: 4 * 1024 * 1024,
      keepaliveTimeMs: 60_000,
      keepaliveTimeoutMs: 20_000,
      logLevel: "info",
      logFormat: "json",
      shutdownGraceMs: 7_000,
      agentModule: null,
      cardListen: "127.0.0.1:8080",
      jsonRpcPath: "/a2a/jsonrpc",
      restPath: "/a2a/rest",
      preferredBinding: "grpc",
      sseKeepAliveMs: 15_000,
      v03: { jsonRpcPath: "/a2a/v0.3/jsonrpc", restPath: "/a2a/v0.3/rest" },
      publicHttpUrl: null,
      corsOrigins: [],
      metricsListen: "card",
      publicGrpcAddress: "127.0.0.1:50051",
      store: "sqlite",
      databaseUrl: null,
      databasePoolSize: 10,
      leaseMs: 10_000,
      dataDir: "/srv/a2a/data",
      retentionMs: null,
      allowMissingVersion: false,
      streamBufferEvents: 1024,
      streamResumeRetentionMs: 600000,
      streamResumeEvents: 100000,
      streamResumeBytes: 67108864,
      streamHeartbeatMs: 15000,
      streamBacklogBytes: 4194304,
      streamsBacklogBytes: 268435456,
      streaming: true,
      storeDurability: "process",
      storeCommitWindowMs: 1,
      pushNotifications: true,
      push: {
        allowHosts: [],
        allowHttp: false,
        timeoutMs: 10_000,
        maxAttempts: 10,
        backoffMs: 1000,
        maxBackoffMs: 300_000,
        maxAgeMs: 86_400_000,
        concurrency: 32,
        concurrencyPerHost: 4,
        maxConfigsPerTask: 10,
        signingKey: null,
        signing: "ed25519",
        signingKeyFile: null,
      },
      agentName: null,
      agentDescription: null,
      auth: expect.objectContaining({ schemes: [], anonymous: "loopback" }),
      limits: DEFAULT_LIMITS,
    });
    expect(load({ stdoutIsTTY: true }).logFormat).toBe("pretty");
  });

  test("FND-CONFIG: the PostgreSQL settings are read; postgres without a URL is refused naming both settings", () => {
    const c = load({ env: { A2A_STORE: "postgres", A2A_DATABASE_URL: "postgres://a2a:pw@db:5432/a2a", A2A_DATABASE_POOL_SIZE: "4", A2A_LEASE_MS: "3000" } });
    expect([c.store, c.databaseUrl, c.databasePoolSize, c.leaseMs]).toEqual(["postgres", "postgres://a2a:pw@db:5432/a2a", 4, 3000]);
    expect(() => load({ env: { A2A_STORE: "postgres" } })).toThrow(/A2A_STORE \(--store\) = "postgres" needs A2A_DATABASE_URL \(--database-url\)/);
    expect(() => load({ env: { A2A_LEASE_MS: "10" } })).toThrow(/A2A_LEASE_MS/);
  });

  test("FND-CONFIG, issue 15 item 5: A2A_STORE_COMMIT_WINDOW takes 0 or a duration up to 1s (flag too); anything else is refused naming it", () => {
    expect(load({ env: { A2A_STORE_COMMIT_WINDOW: "0" } }).storeCommitWindowMs).toBe(0);
    expect(load({ env: { A2A_STORE_COMMIT_WINDOW: "5ms" } }).storeCommitWindowMs).toBe(5);
    expect(load({ argv: ["--store-commit-window", "1s"] }).storeCommitWindowMs).toBe(1000);
    for (const bad of ["off", "2s", "1", "-1ms", "fast"]) {
      expect(() => load({ env: { A2A_STORE_COMMIT_WINDOW: bad } })).toThrow(/A2A_STORE_COMMIT_WINDOW/);
    }
  });

  test("FND-CONFIG: a bad A2A_DATABASE_URL is refused without repeating it (it may hold a password)", () => {
    for (const url of ["mysql://u:s3cret@db/x", "not a url s3cret", "postgres://u:s3cret@/x"]) {
      let message = "";
      try {
        load({ env: { A2A_STORE: "postgres", A2A_DATABASE_URL: url } });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/A2A_DATABASE_URL \(--database-url\) = \(not repeated\)/);
      expect(message).not.toContain("s3cret");
    }
  });

  test("FND-CONFIG: environment variables are read, flags win over them, empty counts as unset", () => {
    const env = {
      A2A_LISTEN: "0.0.0.0:6000",
      A2A_MAX_MESSAGE_BYTES: "16MiB",
      A2A_LOG_LEVEL: "debug",
      A2A_LOG_FORMAT: "pretty",
      A2A_CARD_LISTEN: "off",
      A2A_STORE: "memory",
      A2A_DATA_DIR: "/data",
      A2A_RETENTION: "1d12h",
      A2A_ALLOW_MISSING_VERSION: "yes",
      A2A_STREAM_BUFFER_EVENTS: "10",
      A2A_AGENT_NAME: "Echo",
      A2A_SHUTDOWN_GRACE_MS: "",
      A2A_PUBLIC_GRPC_ADDRESS: "agent.example.com:443",
      A2A_AUTH: "none",
      A2A_METRICS_LISTEN: "127.0.0.1:9464",
    };
    const c = load({ env, argv: ["--listen", "[::]:7000", "--log-level=warn", "--allow-missing-version=false"] });
    expect(c).toMatchObject({
      listen: "[::]:7000",
      maxMessageBytes: 16 * 1024 * 1024,
      logLevel: "warn",
      logFormat: "pretty",
      cardListen: null,
      store: "memory",
      dataDir: "/data",
      retentionMs: 36 * 3_600_000,
      allowMissingVersion: false,
      streamBufferEvents: 10,
      agentName: "Echo",
      shutdownGraceMs: 7_000,
      publicGrpcAddress: "agent.example.com:443",
      metricsListen: "127.0.0.1:9464",
    });
    expect(load({ env: { A2A_METRICS_LISTEN: "OFF" } }).metricsListen).toBeNull();
    expect(load({ argv: ["--allow-missing-version"] }).allowMissingVersion).toBe(true);
    expect(load({ env: { A2A_LISTEN: "127.0.0.1:0" } }).publicGrpcAddress).toBe("127.0.0.1:0");
  });

  test("issue 21: push settings are read from their fixed names (A2A_PUSH_ALLOW_HOSTS, A2A_PUSH_ALLOW_HTTP, ...)", () => {
    const secret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
    const c = load({
      env: {
        A2A_PUSH_ALLOW_HOSTS: "127.0.0.1, ::1,hooks.internal,10.0.0.0/8",
        A2A_PUSH_ALLOW_HTTP: "true",
        A2A_PUSH_TIMEOUT_MS: "2500",
        A2A_PUSH_MAX_ATTEMPTS: "3",
        A2A_PUSH_BACKOFF_MS: "10",
        A2A_PUSH_MAX_BACKOFF_MS: "50",
        A2A_PUSH_MAX_AGE: "30m",
        A2A_PUSH_CONCURRENCY: "4",
        A2A_PUSH_CONCURRENCY_PER_HOST: "2",
        A2A_PUSH_MAX_CONFIGS_PER_TASK: "2",
        A2A_PUSH_SIGNING_SECRET: secret,
      },
      argv: ["--push-notifications=false"],
    });
    expect(c.pushNotifications).toBe(false);
    expect(c.push).toEqual({
      allowHosts: ["127.0.0.1", "::1", "hooks.internal", "10.0.0.0/8"],
      allowHttp: true,
      timeoutMs: 2500,
      maxAttempts: 3,
      backoffMs: 10,
      maxBackoffMs: 50,
      maxAgeMs: 1_800_000,
      concurrency: 4,
      concurrencyPerHost: 2,
      maxConfigsPerTask: 2,
      signingKey: Buffer.alloc(32, 1),
      signing: "hmac",
      signingKeyFile: null,
    });
  });

  test.each([
    [{ env: { A2A_PUSH_ALLOW_HOSTS: "10.0.0.0/99" } }, "A2A_PUSH_ALLOW_HOSTS (--push-allow-hosts)"],
    [{ env: { A2A_PUSH_ALLOW_HOSTS: "a b" } }, "A2A_PUSH_ALLOW_HOSTS (--push-allow-hosts)"],
    [{ env: { A2A_PUSH_SIGNING_SECRET: "hunter2" } }, "A2A_PUSH_SIGNING_SECRET (--push-signing-secret)"],
    [{ env: { A2A_PUSH_CONCURRENCY: "0" } }, "A2A_PUSH_CONCURRENCY (--push-concurrency)"],
    [{ env: { A2A_PUSH_CONCURRENCY_PER_HOST: "0" } }, "A2A_PUSH_CONCURRENCY_PER_HOST (--push-concurrency-per-host)"],
    [{ env: { A2A_PUSH_SIGNING: "rsa" } }, "A2A_PUSH_SIGNING (--push-signing)"],
    [{ env: { A2A_PUSH_SIGNING: "hmac" } }, "A2A_PUSH_SIGNING (--push-signing)"],
    [{ env: { A2A_PUSH_SIGNING_KEY_FILE: "/nonexistent/key.pem" } }, "A2A_PUSH_SIGNING_KEY_FILE (--push-signing-key-file)"],
    [{ env: { A2A_PUSH_MAX_AGE: "off" } }, "A2A_PUSH_MAX_AGE (--push-max-age)"],
    [{ env: { A2A_PUSH_BACKOFF_MS: "500", A2A_PUSH_MAX_BACKOFF_MS: "100" } }, "A2A_PUSH_MAX_BACKOFF_MS (--push-max-backoff-ms)"],
  ])("issue 21: a bad push setting stops start-up naming it (%j)", (sources, name) => {
    expect(() => load(sources)).toThrow(name);
  });

  test.each([
    ["A2A_PUSH_SIGNING_SECRET", "whsec_dG9vLXNob3J0LXRvLXNpZ24="],
    ["A2A_PUSH_SIGNING_SECRET", "hunter2-is-my-password"],
    ["A2A_DATABASE_URL", "mysql://a2a:pa55word@db:3306/a2a"],
  ])("ISSUE33-10: a malformed secret setting (%s) is named in the error, its value never repeated", (env, value) => {
    const message = errorOf({ env: { A2A_STORE: "postgres", A2A_DATABASE_URL: "postgres://u:p@h/d", [env]: value } });
    expect(message).toContain(env);
    expect(message).not.toContain(value);
    expect(message).not.toContain(value.slice(6, 14));
  });

  test.each([
    [{ A2A_LISTEN: "0.0.0.0:50051", A2A_AUTH: "none" }, "127.0.0.1:9464"],
    [{ A2A_LISTEN: "[::]:50051", A2A_AUTH: "none", A2A_CARD_LISTEN: "127.0.0.1:8080" }, "127.0.0.1:9464"],
    [{ A2A_LISTEN: "[::]:50051", A2A_AUTH: "none", A2A_CARD_LISTEN: "off" }, "card"], // no card listener: metrics stay off, no new port
    [{ A2A_CARD_LISTEN: "0.0.0.0:8080" }, "127.0.0.1:9464"],
    [{ A2A_LISTEN: "0.0.0.0:50051", A2A_AUTH: "none", A2A_METRICS_LISTEN: "card" }, "card"],
    [{ A2A_LISTEN: "0.0.0.0:50051", A2A_AUTH: "none", A2A_METRICS_LISTEN: "0.0.0.0:9464" }, "0.0.0.0:9464"],
    [{}, "card"],
    [{ A2A_LISTEN: "[::1]:50051", A2A_CARD_LISTEN: "localhost:8080" }, "card"],
  ])("ISSUE33-13: metrics leave the public card listener: %j serves them on %s", (env, metricsListen) => {
    expect(load({ env }).metricsListen).toBe(metricsListen);
  });

  test("ISSUE33-10: a JWKS URL that does not parse is named, never repeated (it may carry user:password@)", () => {
    const value = "ftp://issuer:hunter2-jwks@keys.example/jwks.json";
    const message = errorOf({ env: { A2A_AUTH: "jwt", A2A_JWT_JWKS_URL: value, A2A_JWT_ISSUER: "https://i.example", A2A_JWT_AUDIENCE: "a2a" } });
    expect(message).toContain("A2A_JWT_JWKS_URL");
    expect(message).not.toContain("hunter2-jwks");
  });

  test("ISSUE33-10: a long bad value is shown cut short, not whole", () => {
    const message = errorOf({ env: { A2A_LISTEN: `x${"y".repeat(5000)}` } });
    expect(message.length).toBeLessThan(400);
  });

  test.each([
    [{ env: { A2A_LISTEN: "localhost" } }, "A2A_LISTEN (--listen)"],
    [{ env: { A2A_METRICS_LISTEN: "metrics" } }, "A2A_METRICS_LISTEN (--metrics-listen)"],
    [{ argv: ["--listen=1.2.3.4:70000"] }, "A2A_LISTEN (--listen)"],
    [{ env: { A2A_LISTEN: "::1:50051" } }, "A2A_LISTEN (--listen)"],
    [{ env: { A2A_MAX_MESSAGE_BYTES: "lots" } }, "A2A_MAX_MESSAGE_BYTES (--max-message-bytes)"],
    [{ env: { A2A_KEEPALIVE_TIME_MS: "-5" } }, "A2A_KEEPALIVE_TIME_MS (--keepalive-time-ms)"],
    [{ env: { A2A_KEEPALIVE_TIMEOUT_MS: "1.5" } }, "A2A_KEEPALIVE_TIMEOUT_MS (--keepalive-timeout-ms)"],
    [{ env: { A2A_LOG_LEVEL: "loud" } }, "A2A_LOG_LEVEL (--log-level)"],
    [{ env: { A2A_LOG_FORMAT: "xml" } }, "A2A_LOG_FORMAT (--log-format)"],
    [{ env: { A2A_SHUTDOWN_GRACE_MS: "soon" } }, "A2A_SHUTDOWN_GRACE_MS (--shutdown-grace-ms)"],
    [{ env: { A2A_CARD_LISTEN: "nowhere" } }, "A2A_CARD_LISTEN (--card-listen)"],
    [{ env: { A2A_PUBLIC_GRPC_ADDRESS: "https://agent.example.com" } }, "A2A_PUBLIC_GRPC_ADDRESS (--public-grpc-address)"],
    [{ env: { A2A_STORE: "postgres" } }, "A2A_STORE (--store)"],
    [{ env: { A2A_RETENTION: "7 days" } }, "A2A_RETENTION (--retention)"],
    [{ env: { A2A_ALLOW_MISSING_VERSION: "maybe" } }, "A2A_ALLOW_MISSING_VERSION (--allow-missing-version)"],
    [{ env: { A2A_STREAM_BUFFER_EVENTS: "0" } }, "A2A_STREAM_BUFFER_EVENTS (--stream-buffer-events)"],
    [{ env: { A2A_AGENT_MODULE: "./no-such-agent.js" } }, "A2A_AGENT_MODULE (--agent-module)"],
    [{ argv: ["--colour"] }, "unknown flag --colour"],
    [{ argv: ["serve"] }, 'unexpected argument "serve"'],
    [{ argv: ["--listen"] }, "flag --listen needs a value"],
  ] as Array<[ConfigSources, string]>)("FND-CONFIG: invalid %j is one ConfigError naming %s", (sources, named) => {
    expect(errorOf(sources)).toContain(named);
  });

  test("FND-CONFIG: the agent module path resolves against the working directory", () => {
    writeFileSync(join(pki.dir, "agent.js"), "export default {}\n");
    expect(load({ cwd: pki.dir, env: { A2A_AGENT_MODULE: "agent.js" } }).agentModule).toBe(join(pki.dir, "agent.js"));
  });

  test("R-GEN-2: TLS files are read and checked at start-up", () => {
    const c = load({ env: { A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.serverKey } });
    expect(c.tls?.cert.toString()).toContain("BEGIN CERTIFICATE");
    expect(c.tls?.clientCa).toBeNull();
    const m = load({ argv: [`--tls-cert=${pki.serverCert}`, `--tls-key=${pki.serverKey}`, `--tls-client-ca=${pki.caCert}`] });
    expect(m.tls?.clientCaFile).toBe(pki.caCert);
  });

  test.each([
    [{ A2A_TLS_KEY: "k.pem" }, "A2A_TLS_KEY (--tls-key) is set but A2A_TLS_CERT (--tls-cert) is not"],
    [{ A2A_TLS_CERT: "c.pem" }, "A2A_TLS_CERT (--tls-cert) is set but A2A_TLS_KEY (--tls-key) is not"],
    [{ A2A_TLS_CLIENT_CA: "ca.pem" }, "A2A_TLS_CLIENT_CA (--tls-client-ca) is set but TLS is off"],
    [{ A2A_TLS_CERT: "/nope/cert.pem", A2A_TLS_KEY: "/nope/key.pem" }, 'A2A_TLS_CERT (--tls-cert) = "/nope/cert.pem": cannot read'],
  ])("R-GEN-2: bad TLS settings %j are refused", (env, message) => {
    expect(errorOf({ env })).toContain(message);
  });

  test("R-GEN-2: a key that does not match the certificate, or a key given as the certificate, is refused", () => {
    expect(errorOf({ env: { A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.otherKey } })).toContain(
      "A2A_TLS_KEY (--tls-key) does not belong to the certificate in A2A_TLS_CERT (--tls-cert)",
    );
    expect(errorOf({ env: { A2A_TLS_CERT: pki.serverKey, A2A_TLS_KEY: pki.serverKey } })).toContain("A2A_TLS_CERT (--tls-cert)");
    expect(errorOf({ env: { A2A_TLS_CERT: pki.serverCert, A2A_TLS_KEY: pki.serverCert } })).toContain("A2A_TLS_KEY (--tls-key)");
  });

  test("FND-CONFIG: --help and the settings table cover every setting", () => {
    expect(wantsHelp(["--help"])).toBe(true);
    expect(wantsHelp(["-h"])).toBe(true);
    expect(wantsHelp(["--listen=x"])).toBe(false);
    const table = describeConfig();
    for (const s of Object.values(SETTINGS)) expect(table).toContain(`| \`${s.env}\` | \`--${s.flag}\` |`);
  });
});

describe("the HTTP listener's settings (A-35)", () => {
  test("A-35: A2A_HTTP_LISTEN wins over its older name A2A_CARD_LISTEN, which still works alone; paths and URLs are checked", () => {
    expect(loadConfig({ env: { A2A_HTTP_LISTEN: "127.0.0.1:9000", A2A_CARD_LISTEN: "127.0.0.1:9001" } }).cardListen).toBe("127.0.0.1:9000");
    expect(loadConfig({ env: { A2A_CARD_LISTEN: "127.0.0.1:9001" } }).cardListen).toBe("127.0.0.1:9001");
    expect(loadConfig({ env: { A2A_HTTP_LISTEN: "off" } }).cardListen).toBeNull();
    expect(loadConfig({ env: { A2A_JSONRPC_PATH: "off" } }).jsonRpcPath).toBeNull();
    expect(loadConfig({ env: { A2A_REST_PATH: "off" } }).restPath).toBeNull();
    expect(loadConfig({ env: { A2A_V03: "off" } }).v03).toBeNull();
    expect(loadConfig({ env: { A2A_V03_REST_PATH: "off" } }).v03).toEqual({ jsonRpcPath: "/a2a/v0.3/jsonrpc", restPath: null });
    expect(loadConfig({ env: { A2A_PREFERRED_BINDING: "REST" } }).preferredBinding).toBe("rest");
    expect(() => loadConfig({ env: { A2A_PREFERRED_BINDING: "soap" } })).toThrow(/A2A_PREFERRED_BINDING/);
    expect(() => loadConfig({ env: { A2A_JSONRPC_PATH: "no-slash" } })).toThrow(/A2A_JSONRPC_PATH/);
    expect(loadConfig({ env: { A2A_PUBLIC_HTTP_URL: "https://agent.example.com/" } }).publicHttpUrl).toBe("https://agent.example.com");
    expect(() => loadConfig({ env: { A2A_PUBLIC_HTTP_URL: "ftp://x" } })).toThrow(/A2A_PUBLIC_HTTP_URL/);
    expect(loadConfig({ env: { A2A_CORS_ORIGINS: "https://a.example, https://b.example" } }).corsOrigins).toEqual(["https://a.example", "https://b.example"]);
  });
});
