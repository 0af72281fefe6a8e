import { AUTH_SETTINGS } from "../auth/auth-settings.js";
import { LIMITS_SETTINGS } from "../limits/limits-settings.js";
import { PUSH_SETTINGS } from "../push/push-settings.js";
import { setting, type Setting } from "../settings/setting.js";

export { settingName, type Setting } from "../settings/setting.js";

/**
 * Every setting the service reads, with its environment variable, its flag and its
 * documented default. The loader, `--help` and the README table all come from this list,
 * so they cannot drift apart.
 */
export const CORE_SETTINGS = {
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
  restPath: setting("A2A_REST_PATH", "rest-path", "/a2a/rest", "Base path of the HTTP+JSON (REST) binding on A2A_HTTP_LISTEN, or off."),
  preferredBinding: setting(
    "A2A_PREFERRED_BINDING",
    "preferred-binding",
    "grpc",
    "The binding the agent card lists first (clients pick the first they speak): grpc, jsonrpc or rest.",
  ),
  sseKeepAliveMs: setting(
    "A2A_SSE_KEEPALIVE",
    "sse-keepalive",
    "15s",
    "An SSE stream (JSON-RPC, HTTP+JSON) silent this long gets a comment line, so proxies keep long waits open; or off.",
  ),
  v03: setting(
    "A2A_V03",
    "v03",
    "on",
    "Serve A2A v0.3 clients beside v1.0 (gRPC a2a.v1.A2AService, the 0.3 JSON-RPC and HTTP+JSON paths, the 0.3 card fields): on or off.",
  ),
  v03JsonRpcPath: setting("A2A_V03_JSONRPC_PATH", "v03-jsonrpc-path", "/a2a/v0.3/jsonrpc", "Path of the A2A v0.3 JSON-RPC binding on A2A_HTTP_LISTEN, or off."),
  v03RestPath: setting("A2A_V03_REST_PATH", "v03-rest-path", "/a2a/v0.3/rest", "Base path of the A2A v0.3 HTTP+JSON binding on A2A_HTTP_LISTEN, or off."),
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

/** Every setting: the service's own, then each capability's (each capability owns and parses its own). */
export const SETTINGS = { ...CORE_SETTINGS, ...AUTH_SETTINGS, ...PUSH_SETTINGS, ...LIMITS_SETTINGS } as const;

export type SettingKey = keyof typeof SETTINGS;

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
      "restPath",
      "preferredBinding",
      "sseKeepAliveMs",
      "v03",
      "v03JsonRpcPath",
      "v03RestPath",
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
