/**
 * Every setting the service reads, with its environment variable, its flag and its
 * documented default. The loader, `--help` and the README table all come from this list,
 * so they cannot drift apart.
 */
export interface Setting {
  readonly env: string;
  /** Long flag without the dashes. */
  readonly flag: string;
  /** How the default reads in docs ("" = unset). */
  readonly defaultText: string;
  readonly description: string;
  /** A flag without a value (`--allow-missing-version`); the env var takes a boolean word. */
  readonly boolean?: true;
}

function setting(env: string, flag: string, defaultText: string, description: string, boolean?: true): Setting {
  return boolean ? { env, flag, defaultText, description, boolean } : { env, flag, defaultText, description };
}

export const SETTINGS = {
  listen: setting("A2A_LISTEN", "listen", "127.0.0.1:50051", "gRPC listen address, host:port (IPv6 in brackets: [::]:50051). Port 0 picks a free port."),
  tlsCert: setting("A2A_TLS_CERT", "tls-cert", "(unset: plaintext)", "PEM certificate chain file; with A2A_TLS_KEY turns TLS on (TLS 1.2 minimum)."),
  tlsKey: setting("A2A_TLS_KEY", "tls-key", "(unset)", "PEM private key file for A2A_TLS_CERT."),
  tlsClientCa: setting(
    "A2A_TLS_CLIENT_CA",
    "tls-client-ca",
    "(unset: no client certificates)",
    "PEM CA bundle; when set, clients must present a certificate signed by it (mTLS).",
  ),
  maxMessageBytes: setting(
    "A2A_MAX_MESSAGE_BYTES",
    "max-message-bytes",
    "4194304 (4 MiB)",
    "Largest gRPC message received or sent, in bytes (suffixes KiB, MiB allowed). ListTasks pages end early to fit it; an agent may grow a task to this size less 64 KiB (less a quarter below 256 KiB), further writes are refused to the agent.",
  ),
  keepaliveTimeMs: setting(
    "A2A_KEEPALIVE_TIME_MS",
    "keepalive-time-ms",
    "60000",
    "Interval of HTTP/2 keepalive pings the server sends on idle connections, ms.",
  ),
  keepaliveTimeoutMs: setting(
    "A2A_KEEPALIVE_TIMEOUT_MS",
    "keepalive-timeout-ms",
    "20000",
    "How long to wait for a keepalive ping ack before closing the connection, ms.",
  ),
  logLevel: setting("A2A_LOG_LEVEL", "log-level", "info", "trace, debug, info, warn, error, fatal or silent."),
  logFormat: setting(
    "A2A_LOG_FORMAT",
    "log-format",
    "pretty on a terminal, else json",
    "json (one object per line) or pretty (human-readable; needs the pino-pretty package).",
  ),
  shutdownGraceMs: setting(
    "A2A_SHUTDOWN_GRACE_MS",
    "shutdown-grace-ms",
    "7000",
    "On SIGTERM/SIGINT: new calls are refused and running agents get this long to finish, ms; then the tasks still running are FAILED (\"the server shut down\"; an agent that resumes hands them over instead), their streams get that status and end, and the server closes what is left within 1 s. Below docker's and podman's 10 s stop timeout.",
  ),
  agentModule: setting("A2A_AGENT_MODULE", "agent-module", "(unset: built-in demo agent)", "Path to a JavaScript module whose default export is the agent."),
  cardListen: setting("A2A_CARD_LISTEN", "card-listen", "127.0.0.1:8080", "Older name of A2A_HTTP_LISTEN (used when A2A_HTTP_LISTEN is unset)."),
  httpListen: setting(
    "A2A_HTTP_LISTEN",
    "http-listen",
    "127.0.0.1:8080",
    "HTTP listen address for the agent card (/.well-known/agent-card.json), JSON-RPC (A2A_JSONRPC_PATH) and, unless moved, metrics; or off.",
  ),
  jsonRpcPath: setting("A2A_JSONRPC_PATH", "jsonrpc-path", "/a2a/jsonrpc", "Path of the JSON-RPC 2.0 binding (POST) on A2A_HTTP_LISTEN, or off."),
  publicHttpUrl: setting(
    "A2A_PUBLIC_HTTP_URL",
    "public-http-url",
    "(http://<A2A_HTTP_LISTEN>)",
    "Public base URL of the HTTP listener (e.g. https://agent.example.com behind a proxy); the card's JSON-RPC interface URL is this plus A2A_JSONRPC_PATH.",
  ),
  corsOrigins: setting(
    "A2A_CORS_ORIGINS",
    "cors-origins",
    "(unset: no CORS on the bindings)",
    "Comma-separated origins that browsers may call the JSON-RPC binding from (* for any); the public card allows any origin regardless.",
  ),
  metricsListen: setting(
    "A2A_METRICS_LISTEN",
    "metrics-listen",
    "(the card listener; 127.0.0.1:9464 beyond loopback)",
    "HTTP listen address for Prometheus metrics (/metrics), card (on A2A_CARD_LISTEN), or off. Default: on the card listener while A2A_LISTEN and A2A_CARD_LISTEN are loopback (off with the card listener off); when either is reachable beyond loopback, on a listener of their own at 127.0.0.1:9464, so that the public card port never serves them (set e.g. 0.0.0.0:9464 for a scraper on another host, and keep that port private).",
  ),
  publicGrpcAddress: setting("A2A_PUBLIC_GRPC_ADDRESS", "public-grpc-address", "(the listen address)", "host:port that the agent card advertises to clients."),
  store: setting("A2A_STORE", "store", "sqlite", "Task store: sqlite (durable), postgres (durable, any number of replicas on one database) or memory."),
  databaseUrl: setting(
    "A2A_DATABASE_URL",
    "database-url",
    "(unset)",
    "PostgreSQL connection URL for A2A_STORE=postgres: postgres://user:password@host:5432/database (never logged).",
  ),
  databasePoolSize: setting("A2A_DATABASE_POOL_SIZE", "database-pool-size", "10", "Connections each replica keeps to PostgreSQL (plus one for LISTEN)."),
  leaseMs: setting(
    "A2A_LEASE_MS",
    "lease-ms",
    "10000",
    "With postgres: how long a replica's hold on a running task lasts without renewal (renewed every third of it), ms; a dead replica's tasks are settled by another once it ran out.",
  ),
  dataDir: setting("A2A_DATA_DIR", "data-dir", "./data", "Directory of the sqlite database."),
  retention: setting("A2A_RETENTION", "retention", "off", "Delete terminal tasks older than this (e.g. 7d, 12h, 30m), or off."),
  allowMissingVersion: setting(
    "A2A_ALLOW_MISSING_VERSION",
    "allow-missing-version",
    "false",
    "Read a request without the a2a-version header as 1.0 instead of 0.3 (for hand-driven tools).",
    true,
  ),
  streaming: setting(
    "A2A_STREAMING",
    "streaming",
    "true",
    "Whether the agent card declares streaming; when false, SendStreamingMessage and SubscribeToTask answer UNSUPPORTED_OPERATION.",
    true,
  ),
  storeDurability: setting(
    "A2A_STORE_DURABILITY",
    "store-durability",
    "process",
    "What a committed sqlite write survives: process (a crash or SIGKILL) or power (also power loss; an fsync per commit).",
  ),
  storeCommitWindow: setting(
    "A2A_STORE_COMMIT_WINDOW",
    "store-commit-window",
    "1ms",
    "sqlite: a commit that follows the last one by less than this waits until it has passed, so a run of writes over many turns shares one commit; 0 commits at the end of every turn. An idle store commits at once.",
  ),
  streamBufferEvents: setting(
    "A2A_STREAM_BUFFER_EVENTS",
    "stream-buffer-events",
    "1024",
    "Entries a slow stream's merged backlog may hold (merging keeps an ordinary burst to a few) before the stream is ended with RESOURCE_EXHAUSTED.",
  ),
  streamBacklogBytes: setting(
    "A2A_STREAM_BACKLOG_BYTES",
    "stream-backlog-bytes",
    "4MiB",
    "Encoded bytes a slow stream's merged backlog may hold before the stream is ended with RESOURCE_EXHAUSTED.",
  ),
  streamsBacklogBytes: setting(
    "A2A_STREAMS_BACKLOG_BYTES",
    "streams-backlog-bytes",
    "256MiB",
    "Encoded bytes the backlogs of all slow streams may hold together; a stream that would pass it is ended with RESOURCE_EXHAUSTED.",
  ),
  pushNotifications: setting(
    "A2A_PUSH_NOTIFICATIONS",
    "push-notifications",
    "true",
    "Whether the agent card declares push notifications; when false, the push config RPCs and inline configs answer PUSH_NOTIFICATION_NOT_SUPPORTED.",
    true,
  ),
  pushAllowHosts: setting(
    "A2A_PUSH_ALLOW_HOSTS",
    "push-allow-hosts",
    "(empty)",
    "Comma list of host names, IP addresses and CIDR ranges webhooks may reach despite the destination guard (e.g. 127.0.0.1,::1 or 10.0.0.0/8).",
  ),
  pushAllowHttp: setting("A2A_PUSH_ALLOW_HTTP", "push-allow-http", "false", "Allow plain http:// webhook URLs (else https only).", true),
  pushTimeoutMs: setting("A2A_PUSH_TIMEOUT_MS", "push-timeout-ms", "10000", "Timeout of one webhook request, connection included, ms."),
  pushMaxAttempts: setting(
    "A2A_PUSH_MAX_ATTEMPTS",
    "push-max-attempts",
    "10",
    "Attempts per event and webhook, the first included, before the delivery is given up.",
  ),
  pushBackoffMs: setting(
    "A2A_PUSH_BACKOFF_MS",
    "push-backoff-ms",
    "1000",
    "Wait after a first failed attempt, ms; doubled after each further failure, with jitter.",
  ),
  pushMaxBackoffMs: setting("A2A_PUSH_MAX_BACKOFF_MS", "push-max-backoff-ms", "300000", "Longest wait between two attempts, ms."),
  pushMaxAge: setting("A2A_PUSH_MAX_AGE", "push-max-age", "24h", "An event not delivered this long after it happened is given up (e.g. 24h, 30m)."),
  pushConcurrency: setting("A2A_PUSH_CONCURRENCY", "push-concurrency", "32", "Webhook requests in flight at most."),
  pushConcurrencyPerHost: setting(
    "A2A_PUSH_CONCURRENCY_PER_HOST",
    "push-concurrency-per-host",
    "4",
    "Webhook requests in flight to one destination host at most. Waiting deliveries are served round robin across principals, and one principal holds at most three quarters of A2A_PUSH_CONCURRENCY, so one principal's slow receivers cannot delay another's.",
  ),
  pushMaxConfigsPerTask: setting("A2A_PUSH_MAX_CONFIGS_PER_TASK", "push-max-configs-per-task", "10", "Push configs one task may have."),
  pushSigningSecret: setting(
    "A2A_PUSH_SIGNING_SECRET",
    "push-signing-secret",
    "(unset)",
    "Root secret of HMAC signing (whsec_ + base64 of 24-64 random bytes): each tenant's receivers get their own secret derived from it (a2a-grpc-server push tenant-secret --tenant=NAME), never this one.",
  ),
  pushSigning: setting(
    "A2A_PUSH_SIGNING",
    "push-signing",
    "ed25519 (hmac when A2A_PUSH_SIGNING_SECRET is set)",
    "How webhooks are signed (webhook-signature): ed25519 (v1a, verified with the server's public key from the card or `a2a push public-key`), hmac (v1, one secret per tenant) or off.",
  ),
  pushSigningKeyFile: setting(
    "A2A_PUSH_SIGNING_KEY_FILE",
    "push-signing-key-file",
    "(unset: <data dir>/push-signing-key.pem, made on first start)",
    "Ed25519 private key (PKCS#8 PEM) that signs webhooks; replicas on PostgreSQL must share one. Unset: the key the server made in A2A_DATA_DIR (0600); with the memory store, a key for the process only.",
  ),
  auth: setting(
    "A2A_AUTH",
    "auth",
    "(unset: anonymous, loopback only)",
    "Who may call: none, jwt, api-key, mtls, or a comma list tried in that order (jwt,api-key). Unset: anonymous callers, and the server refuses to listen beyond loopback.",
  ),
  jwtPublicKeyFile: setting(
    "A2A_JWT_PUBLIC_KEY_FILE",
    "jwt-public-key-file",
    "(unset)",
    "PEM public key or certificate that verifies bearer JWTs (or use A2A_JWT_JWKS_URL).",
  ),
  jwtJwksUrl: setting(
    "A2A_JWT_JWKS_URL",
    "jwt-jwks-url",
    "(unset)",
    "JWKS URL of the token issuer's signing keys (https; http only to loopback); cached 2 min, refetched for an unknown kid.",
  ),
  jwtIssuer: setting("A2A_JWT_ISSUER", "jwt-issuer", "(required with jwt)", "The iss every token must carry."),
  jwtAudience: setting("A2A_JWT_AUDIENCE", "jwt-audience", "(required with jwt)", "The aud every token must carry."),
  jwtAlgorithms: setting(
    "A2A_JWT_ALGORITHMS",
    "jwt-algorithms",
    "RS256,PS256,ES256,ES384,EdDSA",
    "Signature algorithms accepted (asymmetric only: none and HMAC are always refused).",
  ),
  jwtClockSkewS: setting("A2A_JWT_CLOCK_SKEW_S", "jwt-clock-skew-s", "30", "Clock skew tolerated on exp and nbf, seconds."),
  jwtScopesClaim: setting("A2A_JWT_SCOPES_CLAIM", "jwt-scopes-claim", "scope", "Claim holding the token's scopes (space-separated string or array)."),
  jwtTenantsClaim: setting(
    "A2A_JWT_TENANTS_CLAIM",
    "jwt-tenants-claim",
    "(unset: tokens do not limit tenants)",
    "Claim listing the tenants a token may act in (string or array); a request without a tenant gets the first.",
  ),
  jwtJwksTimeoutMs: setting("A2A_JWT_JWKS_TIMEOUT_MS", "jwt-jwks-timeout-ms", "5000", "Timeout of a JWKS fetch, ms."),
  jwtMaxTokenLifetime: setting(
    "A2A_JWT_MAX_TOKEN_LIFETIME",
    "jwt-max-token-lifetime",
    "24h",
    "Longest lifetime a token may claim (exp - iat, or exp - now without iat), as a duration (1h, 30m); longer-lived tokens are refused.",
  ),
  apiKeysFile: setting(
    "A2A_API_KEYS_FILE",
    "api-keys-file",
    "(unset)",
    "File of hashed API keys, one per line (make lines with `a2a-grpc-server keygen`); reloaded on SIGHUP.",
  ),
  mtlsPrincipal: setting(
    "A2A_MTLS_PRINCIPAL",
    "mtls-principal",
    "subject",
    "What names an mTLS caller: subject (the certificate's subject CN) or san (its first URI, DNS or email SAN).",
  ),
  authScopes: setting(
    "A2A_AUTH_SCOPES",
    "auth-scopes",
    "(unset: no scopes required)",
    "Scopes each RPC needs, RPC=scope pairs: SendMessage=tasks.write,GetTask=tasks.read,*=a2a (* = every other RPC).",
  ),
  authOpenServices: setting(
    "A2A_AUTH_OPEN_SERVICES",
    "auth-open-services",
    "health,reflection",
    "With A2A_AUTH set: which of the gRPC health (grpc.health.v1) and reflection services answer without credentials: health, reflection, both (comma list) or none. The others need a credential like the A2A RPCs. Kubernetes gRPC probes send none: keep health open there.",
  ),
  limitRate: setting(
    "A2A_LIMIT_RATE",
    "limit-rate",
    "100 with A2A_AUTH set, else 50000",
    "Requests per second each principal may make (token bucket; 0 = no limit).",
  ),
  limitBurst: setting(
    "A2A_LIMIT_BURST",
    "limit-burst",
    "200 with A2A_AUTH set, else 100000 (2 × A2A_LIMIT_RATE when that is set)",
    "Requests a principal may make at once before the rate applies.",
  ),
  limitRunsPerPrincipal: setting(
    "A2A_LIMIT_RUNS_PER_PRINCIPAL",
    "limit-runs-per-principal",
    "32 with A2A_AUTH set, else 10000",
    "Agent runs one principal may have going at once (0 = no limit).",
  ),
  limitRuns: setting("A2A_LIMIT_RUNS", "limit-runs", "50000", "Agent runs the whole server may have going at once (0 = no limit)."),
  limitStreamsPerPrincipal: setting(
    "A2A_LIMIT_STREAMS_PER_PRINCIPAL",
    "limit-streams-per-principal",
    "32 with A2A_AUTH set, else 10000",
    "Open SendStreamingMessage and SubscribeToTask streams per principal (0 = no limit).",
  ),
  limitTasksPerPrincipal: setting(
    "A2A_LIMIT_TASKS_PER_PRINCIPAL",
    "limit-tasks-per-principal",
    "0 (no quota)",
    "Tasks one principal may have stored; a SendMessage that would create one more is RESOURCE_EXHAUSTED (0 = no quota).",
  ),
  authFailureRate: setting(
    "A2A_AUTH_FAILURE_RATE",
    "auth-failure-rate",
    "10",
    "Refused credentials per second per client address (token bucket, 5 seconds' worth at once); an address over it gets RESOURCE_EXHAUSTED before its credential is checked (0 = no limit).",
  ),
  maxStructEntries: setting(
    "A2A_MAX_STRUCT_ENTRIES",
    "max-struct-entries",
    "10000",
    "Most entries in one Struct (metadata, data part) or list of a request; more is INVALID_ARGUMENT naming the field.",
  ),
  maxStructDepth: setting(
    "A2A_MAX_STRUCT_DEPTH",
    "max-struct-depth",
    "32",
    "Deepest nesting of Structs and lists in a request value; deeper is INVALID_ARGUMENT naming the field.",
  ),
  streamResumeRetention: setting(
    "A2A_STREAM_RESUME_RETENTION",
    "stream-resume-retention",
    "10m",
    "How long stream events are kept for clients that resume with a cursor (the stream-resume extension, ruling A-33), or off (the extension is not declared and no events are kept).",
  ),
  streamResumeEvents: setting(
    "A2A_STREAM_RESUME_EVENTS",
    "stream-resume-events",
    "100000",
    "Memory store only: stream events kept for resume across all tasks; the oldest go first.",
  ),
  streamResumeBytes: setting(
    "A2A_STREAM_RESUME_BYTES",
    "stream-resume-bytes",
    "64MiB",
    "Memory store only: about the bytes the stream events kept for resume may weigh together; the oldest go first.",
  ),
  streamHeartbeat: setting(
    "A2A_STREAM_HEARTBEAT",
    "stream-heartbeat",
    "15s",
    "A stream of a client that activated the stream-resume extension gets a heartbeat after this long without an event (so idle-resetting proxies keep it), or off.",
  ),
  agentName: setting("A2A_AGENT_NAME", "agent-name", "(the agent's own)", "Overrides the agent card's name."),
  agentDescription: setting("A2A_AGENT_DESCRIPTION", "agent-description", "(the agent's own)", "Overrides the agent card's description."),
} as const satisfies Record<string, Setting>;

export type SettingKey = keyof typeof SETTINGS;

/** How an error message names a setting: `A2A_LISTEN (--listen)`. */
export function settingName(s: Setting): string {
  return `${s.env} (--${s.flag})`;
}

/** A concern `--help` lists its settings under; the keys most-used first. */
export interface SettingGroup {
  readonly title: string;
  readonly keys: readonly SettingKey[];
}

/**
 * The settings by concern, the most-used groups first (`--help` and docs list them in this
 * order). A setting in no group is still listed, under "Other"; a test insists that none is.
 */
export const SETTING_GROUPS: readonly SettingGroup[] = [
  {
    title: "Server",
    keys: [
      "listen",
      "httpListen",
      "cardListen",
      "jsonRpcPath",
      "publicHttpUrl",
      "corsOrigins",
      "publicGrpcAddress",
      "tlsCert",
      "tlsKey",
      "tlsClientCa",
      "shutdownGraceMs",
      "maxMessageBytes",
      "keepaliveTimeMs",
      "keepaliveTimeoutMs",
      "allowMissingVersion",
      "maxStructEntries",
      "maxStructDepth",
    ],
  },
  { title: "Agent", keys: ["agentModule", "agentName", "agentDescription"] },
  {
    title: "Storage",
    keys: ["store", "dataDir", "databaseUrl", "retention", "databasePoolSize", "leaseMs", "storeDurability", "storeCommitWindow"],
  },
  {
    title: "Authentication",
    keys: [
      "auth",
      "apiKeysFile",
      "jwtIssuer",
      "jwtAudience",
      "jwtPublicKeyFile",
      "jwtJwksUrl",
      "jwtAlgorithms",
      "jwtScopesClaim",
      "jwtTenantsClaim",
      "jwtClockSkewS",
      "jwtJwksTimeoutMs",
      "jwtMaxTokenLifetime",
      "mtlsPrincipal",
      "authScopes",
      "authOpenServices",
      "authFailureRate",
    ],
  },
  { title: "Observability", keys: ["logLevel", "logFormat", "metricsListen"] },
  {
    title: "Push notifications",
    keys: [
      "pushNotifications",
      "pushAllowHosts",
      "pushAllowHttp",
      "pushSigning",
      "pushSigningKeyFile",
      "pushSigningSecret",
      "pushTimeoutMs",
      "pushMaxAttempts",
      "pushBackoffMs",
      "pushMaxBackoffMs",
      "pushMaxAge",
      "pushConcurrency",
      "pushConcurrencyPerHost",
      "pushMaxConfigsPerTask",
    ],
  },
  {
    title: "Streams",
    keys: [
      "streaming",
      "streamResumeRetention",
      "streamHeartbeat",
      "streamBufferEvents",
      "streamBacklogBytes",
      "streamsBacklogBytes",
      "streamResumeEvents",
      "streamResumeBytes",
    ],
  },
  { title: "Limits", keys: ["limitRate", "limitBurst", "limitRunsPerPrincipal", "limitRuns", "limitStreamsPerPrincipal", "limitTasksPerPrincipal"] },
];
