import { createHash } from "node:crypto";
import type { JsonObject } from "@bufbuild/protobuf";
import type { AgentCard } from "../../gen/es/lf/a2a/v1/a2a_pb.js";
import type { CardFormBytes } from "../http/card-response.js";
import { cardJsonForms } from "../v03/card/index.js";
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

/** The card as served at AGENT_CARD_PATH: its bytes, ETag and Last-Modified, computed once (each form's, when negotiated). */
export function cardBytes(card: AgentCard): CardBytes {
  const forms = cardJsonForms(card);
  // HTTP dates have one-second precision; round down so If-Modified-Since with this value matches.
  const lastModifiedMs = Math.floor(Date.now() / 1000) * 1000;
  const byVersion = forms.byVersion && { v10: formBytes(forms.byVersion.v10), v03: formBytes(forms.byVersion.v03) };
  return { path: AGENT_CARD_PATH, ...formBytes(forms.headerless), lastModifiedMs, ...(byVersion === undefined ? {} : { byVersion }) };
}

function formBytes(json: JsonObject): CardFormBytes {
  const body = Buffer.from(JSON.stringify(json), "utf8");
  // Strong ETag from the exact bytes served (R-CARD-5): each form has its own (R-BIND-19).
  return { body, etag: `"${createHash("sha256").update(body).digest("base64url")}"` };
}
