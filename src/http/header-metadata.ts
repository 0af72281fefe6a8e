import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { CallMetadata, CallMetadataValue } from "../service/face.js";
import { RESUME_CURSOR_HEADER } from "../streams/index.js";

/**
 * An HTTP request's headers as the face's call metadata (R-BIND-10): node:http already keys them
 * in lower case, as gRPC metadata is; a header sent on several lines is several values (R-BIND-12).
 * Built once per request; the face keys admission by this object, so a client cannot forge one.
 */
export class HeaderMetadata implements CallMetadata {
  /**
   * `fallbacks`: a key read from another header when absent (the resume cursor from SSE's
   * Last-Event-ID); `defaults`: a value used when the header is absent (A2A-Version from the query,
   * R-BIND-11: the header wins, BQ-6).
   */
  constructor(
    private readonly headers: IncomingHttpHeaders,
    private readonly fallbacks: Readonly<Record<string, string>> = {},
    private readonly defaults: Readonly<Record<string, string>> = {},
  ) {}

  get(key: string): CallMetadataValue[] {
    const fallback = this.fallbacks[key];
    const value = this.headers[key] ?? (fallback === undefined ? undefined : this.headers[fallback]) ?? this.defaults[key];
    if (value === undefined) return [];
    return Array.isArray(value) ? value : [value];
  }

  getMap(): { [key: string]: CallMetadataValue } {
    const map: { [key: string]: CallMetadataValue } = {};
    for (const [key, value] of Object.entries(this.headers)) {
      if (value !== undefined) map[key] = Array.isArray(value) ? (value[0] ?? "") : value;
    }
    return map;
  }
}

/** An HTTP binding's call metadata: the headers, the resume cursor from SSE's Last-Event-ID, `?A2A-Version=` (R-BIND-11). */
export function requestMetadata(req: IncomingMessage): HeaderMetadata {
  return new HeaderMetadata(req.headers, { [RESUME_CURSOR_HEADER]: "last-event-id" }, queryVersion(req.url));
}

/** `?A2A-Version=` as a default for the header (R-BIND-11). */
function queryVersion(url: string | undefined): Record<string, string> {
  const query = url?.indexOf("?") ?? -1;
  if (query < 0) return {};
  const version = new URLSearchParams(url!.slice(query + 1)).get("A2A-Version");
  return version === null ? {} : { "a2a-version": version };
}
