import type { IncomingMessage, ServerResponse } from "node:http";

/*
 * The public Agent Card's HTTP answer, shared by the card's own listener thread
 * (src/protocol/http-thread-worker.ts) and the main-thread HTTP listener that also serves the
 * bindings (http-listener.ts). Only node: modules here: the listener thread loads this too.
 */

const CARD_ALLOW = "GET, HEAD, OPTIONS";

/** The card as served: its bytes and validators, computed once. */
export interface ServedCard {
  readonly path: string;
  readonly bytes: Buffer;
  readonly etag: string;
  readonly lastModifiedMs: number;
  readonly lastModified: string;
}

/** The served form of a card's bytes and validators (a Buffer view, no copy; the Last-Modified text). */
export function servedCardOf(card: { readonly path: string; readonly body: Uint8Array; readonly etag: string; readonly lastModifiedMs: number }): ServedCard {
  return {
    ...card,
    bytes: Buffer.from(card.body.buffer, card.body.byteOffset, card.body.byteLength),
    lastModified: new Date(card.lastModifiedMs).toUTCString(),
  };
}

/** The public Agent Card (R-CARD-1), with CORS, conditional GET and HEAD (R-CARD-5). */
export function serveCard(card: ServedCard, path: string, req: IncomingMessage, res: ServerResponse): void {
  // A public, unauthenticated document: any origin may read it.
  res.setHeader("Access-Control-Allow-Origin", "*");
  if (path !== card.path) return sendJson(res, 404, { error: `not found; the agent card is at ${card.path}` });
  if (req.method === "OPTIONS") {
    // CORS preflight: clients (the official SDK among them) send an A2A-Version header.
    res.writeHead(204, {
      Allow: CARD_ALLOW,
      "Access-Control-Allow-Methods": CARD_ALLOW,
      "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*",
      "Access-Control-Max-Age": "600",
    });
    res.end();
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", CARD_ALLOW);
    return sendJson(res, 405, { error: `method ${req.method} not allowed; use GET` });
  }
  const headers = {
    "Content-Type": "application/json",
    "Cache-Control": "public, max-age=300",
    ETag: card.etag,
    "Last-Modified": card.lastModified,
    "X-Content-Type-Options": "nosniff",
  };
  if (notModified(req, card.etag, card.lastModifiedMs)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "Content-Length": card.bytes.length });
  res.end(req.method === "HEAD" ? undefined : card.bytes);
}

/**
 * Conditional GET (RFC 9110 §13.1): If-None-Match wins when present (weak comparison,
 * `*` matches); otherwise If-Modified-Since compares against the start time.
 */
function notModified(req: IncomingMessage, etag: string, lastModifiedMs: number): boolean {
  const ifNoneMatch = req.headers["if-none-match"];
  if (ifNoneMatch !== undefined) {
    return ifNoneMatch
      .split(",")
      .map((tag) => tag.trim().replace(/^W\//, ""))
      .some((tag) => tag === "*" || tag === etag);
  }
  const ifModifiedSince = req.headers["if-modified-since"];
  if (ifModifiedSince !== undefined) {
    const since = Date.parse(ifModifiedSince);
    return !Number.isNaN(since) && lastModifiedMs <= since;
  }
  return false;
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}
