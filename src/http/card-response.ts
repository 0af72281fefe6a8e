import type { IncomingMessage, ServerResponse } from "node:http";

/*
 * The public Agent Card's HTTP answer, shared by the card's own listener thread
 * (src/protocol/http-thread-worker.ts) and the main-thread HTTP listener that also serves the
 * bindings (http-listener.ts). Only node: modules here: the listener thread loads this too.
 */

const CARD_ALLOW = "GET, HEAD, OPTIONS";

/** One form of the card as made on the main thread: its bytes and strong ETag. */
export interface CardFormBytes {
  readonly body: Uint8Array;
  readonly etag: string;
}

/** The forms negotiated on A2A-Version: the pure v1.0 card and the pure v0.3 card. */
export interface CardVersions<Form> {
  readonly v10: Form;
  readonly v03: Form;
}

/** One form as served: a Buffer view of its bytes and its ETag. */
export interface ServedForm {
  readonly bytes: Buffer;
  readonly etag: string;
}

/** The card as served: its bytes and validators, computed once. bytes/etag are the header-less form. */
export interface ServedCard extends ServedForm {
  readonly path: string;
  readonly lastModifiedMs: number;
  readonly lastModified: string;
  /** Present when the card is negotiated (v0.3 served too); then every answer says Vary: A2A-Version. */
  readonly byVersion?: CardVersions<ServedForm>;
}

/** The served form of a card's bytes and validators (Buffer views, no copy; the Last-Modified text). */
export function servedCardOf(card: {
  readonly path: string;
  readonly body: Uint8Array;
  readonly etag: string;
  readonly lastModifiedMs: number;
  readonly byVersion?: CardVersions<CardFormBytes>;
}): ServedCard {
  const { byVersion } = card;
  return {
    path: card.path,
    ...servedFormOf(card),
    lastModifiedMs: card.lastModifiedMs,
    lastModified: new Date(card.lastModifiedMs).toUTCString(),
    ...(byVersion === undefined ? {} : { byVersion: { v10: servedFormOf(byVersion.v10), v03: servedFormOf(byVersion.v03) } }),
  };
}

function servedFormOf(form: CardFormBytes): ServedForm {
  return { bytes: Buffer.from(form.body.buffer, form.body.byteOffset, form.body.byteLength), etag: form.etag };
}

/**
 * The form a request asks for (A-37, R-V03-51): A2A-Version 1.x or later → the pure v1.0 card,
 * 0.x → the pure v0.3 card, absent, empty or unreadable → the header-less superset. The header
 * wins; `?A2A-Version=` is read only without it (R-BIND-11, BQ-6).
 */
export function cardFormFor(card: ServedCard, req: IncomingMessage): ServedForm {
  if (card.byVersion === undefined) return card;
  const header = req.headers["a2a-version"];
  const asked = typeof header === "string" && header.trim() !== "" ? header : versionQuery(req.url);
  const major = /^\s*(\d+)(?:\.\d+)*\s*(?:,|$)/.exec(asked ?? "")?.[1];
  if (major === undefined) return card;
  return Number(major) >= 1 ? card.byVersion.v10 : card.byVersion.v03;
}

function versionQuery(url: string | undefined): string | undefined {
  const query = url?.indexOf("?") ?? -1;
  if (url === undefined || query < 0) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get("A2A-Version") ?? undefined;
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
  const form = cardFormFor(card, req);
  const headers = {
    "Content-Type": "application/json",
    "Cache-Control": "public, max-age=300",
    ETag: form.etag,
    "Last-Modified": card.lastModified,
    "X-Content-Type-Options": "nosniff",
    // Caches keep one copy per form (R-BIND-19); a card served in one form only does not vary.
    ...(card.byVersion === undefined ? {} : { Vary: "A2A-Version" }),
  };
  if (notModified(req, form.etag, card.lastModifiedMs)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "Content-Length": form.bytes.length });
  res.end(req.method === "HEAD" ? undefined : form.bytes);
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
