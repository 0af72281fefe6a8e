import type { LevelWithSilent } from "pino";
import type { AuthConfig } from "../auth/auth-config.js";
import type { LimitsConfig } from "../limits/limits-config.js";
import type { PushSettings } from "../push/push-config.js";

/** TLS material, already read and checked at startup. */
export interface TlsConfig {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Set = mutual TLS: clients must present a certificate signed by this CA. */
  readonly clientCaFile: string | null;
  readonly clientCa: Buffer | null;
}

/** The service's whole configuration, parsed and validated (see settings.ts for the sources). */
export interface Config {
  /** gRPC listen address as host:port. */
  readonly listen: string;
  /** null = plaintext. */
  readonly tls: TlsConfig | null;
  readonly maxMessageBytes: number;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly logLevel: LevelWithSilent;
  readonly logFormat: "json" | "pretty";
  readonly shutdownGraceMs: number;
  /** Absolute path of the agent module; null = the built-in demo agent. */
  readonly agentModule: string | null;
  /** HTTP agent card listen address as host:port; null = off. */
  readonly cardListen: string | null;
  /** Path of the JSON-RPC binding on the HTTP listener (A2A_JSONRPC_PATH); null = off. */
  readonly jsonRpcPath: string | null;
  /** Base path of the HTTP+JSON binding on the HTTP listener (A2A_REST_PATH); null = off. */
  readonly restPath: string | null;
  /** The binding the card lists first (A2A_PREFERRED_BINDING, A-35). */
  readonly preferredBinding: "grpc" | "jsonrpc" | "rest";
  /** Silence after which an SSE stream gets a comment line, ms (A2A_SSE_KEEPALIVE, R-BIND-37); null = none. */
  readonly sseKeepAliveMs: number | null;
  /** A2A v0.3 endpoints (A-36, A2A_V03): null = none served; a path null = that 0.3 binding off. */
  readonly v03: { readonly jsonRpcPath: string | null; readonly restPath: string | null } | null;
  /** Public base URL of the HTTP listener (A2A_PUBLIC_HTTP_URL); null = http://<listen address>. */
  readonly publicHttpUrl: string | null;
  /** Origins allowed to call the bindings from a browser (A2A_CORS_ORIGINS); [] = no CORS. */
  readonly corsOrigins: readonly string[];
  /** Where /metrics is served: "card" = on the card listener (if it runs), host:port = a listener of its own, null = off. */
  readonly metricsListen: "card" | string | null;
  /** host:port advertised in the agent card. */
  readonly publicGrpcAddress: string;
  readonly store: "sqlite" | "memory" | "postgres";
  /** postgres://...; set when store is postgres. */
  readonly databaseUrl: string | null;
  readonly databasePoolSize: number;
  readonly leaseMs: number;
  /** Absolute path. */
  readonly dataDir: string;
  /** Age after which terminal tasks are deleted, ms; null = kept forever. */
  readonly retentionMs: number | null;
  readonly allowMissingVersion: boolean;
  /** Entries (after merging, A-32) a slow stream's backlog may hold. */
  readonly streamBufferEvents: number;
  /** Encoded bytes a slow stream's merged backlog may hold. */
  readonly streamBacklogBytes: number;
  /** Encoded bytes all slow streams' backlogs may hold together. */
  readonly streamsBacklogBytes: number;
  /** Declared in the card; off = the streaming RPCs answer UNSUPPORTED_OPERATION (R-CAP-2). */
  readonly streaming: boolean;
  readonly storeDurability: "process" | "power";
  /** SQLite: the shortest time between the end of one commit and the start of the next while writes keep coming, ms; 0 = every turn commits. */
  readonly storeCommitWindowMs: number;
  /** Declared in the card (default on); off = the push RPCs answer PUSH_NOTIFICATION_NOT_SUPPORTED (R-CAP-1). */
  readonly pushNotifications: boolean;
  readonly push: PushSettings;
  /** How long stream events are kept for resume, ms; null = resume off. */
  readonly streamResumeRetentionMs: number | null;
  /** Memory store: events kept for resume across all tasks. */
  readonly streamResumeEvents: number;
  /** Memory store: about the bytes the events kept for resume may weigh together. */
  readonly streamResumeBytes: number;
  /** Silence after which a stream with the resume extension gets a heartbeat, ms; null = none. */
  readonly streamHeartbeatMs: number | null;
  readonly agentName: string | null;
  readonly agentDescription: string | null;
  /** Who may call, and what the card declares about it (README "Authentication"). */
  readonly auth: AuthConfig;
  readonly limits: LimitsConfig;
}
