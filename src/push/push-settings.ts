import { setting, type Setting } from "../settings/setting.js";

/** The push notification settings; parsed by push-config.ts. */
export const PUSH_SETTINGS = {
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
} as const satisfies Record<string, Setting>;
