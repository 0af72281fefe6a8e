import { createHash } from "node:crypto";
import { toJson } from "@bufbuild/protobuf";
import { AgentCardSchema, type AgentCard } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import { startHttpThread, type CardBytes, type DocumentSource, type HttpThread } from "./http-thread.js";

/** The well-known location of the public card (R-CARD-1). */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";

export interface AgentCardServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly card: AgentCard;
  /** Other documents served on this listener, by path (e.g. /metrics), made on the main thread per request. */
  readonly routes?: ReadonlyMap<string, DocumentSource>;
  /** The listener's thread failed after it started. */
  readonly onError?: (error: Error) => void;
}

export type AgentCardServer = HttpThread;

/**
 * Serves the public Agent Card over plain HTTP: a gRPC-only server has no RPC for
 * it, so discovery needs this endpoint (R-CARD-1). The card is fixed for the life of
 * the process, so the body, its ETag and Last-Modified are computed once, here; the
 * requests are answered on the listener's own thread (http-thread.ts says why).
 */
export function startAgentCardServer(options: AgentCardServerOptions): Promise<AgentCardServer> {
  return startHttpThread({
    host: options.host,
    port: options.port,
    card: cardBytes(options.card),
    documents: options.routes,
    onError: options.onError,
  });
}

/** The card as served at AGENT_CARD_PATH: its bytes, ETag and Last-Modified, computed once. */
export function cardBytes(card: AgentCard): CardBytes {
  // ProtoJSON: camelCase names, enum names, unset optionals omitted, explicit false kept (R-DATA-5, R-CAP-5).
  const body = Buffer.from(JSON.stringify(toJson(AgentCardSchema, card)), "utf8");
  // Strong ETag from the exact bytes served (R-CARD-5).
  const etag = `"${createHash("sha256").update(body).digest("base64url")}"`;
  // HTTP dates have one-second precision; round down so If-Modified-Since with this value matches.
  const lastModifiedMs = Math.floor(Date.now() / 1000) * 1000;
  return { path: AGENT_CARD_PATH, body, etag, lastModifiedMs };
}
