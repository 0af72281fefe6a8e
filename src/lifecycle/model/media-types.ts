import type { Part } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";

/** A part's media type: the declared one, or text/plain for a bare text part. Other undeclared parts are not checked. */
export function partMediaType(part: Part): string | undefined {
  if (part.mediaType !== "") return part.mediaType.toLowerCase();
  return part.content.case === "text" ? "text/plain" : undefined;
}

/** `accepted` entries may be exact (`image/png`), a type wildcard (`image/*`) or `*\/*`. Parameters are ignored. */
export function acceptsMediaType(accepted: readonly string[], mediaType: string): boolean {
  const [essence] = mediaType.split(";");
  const [type] = essence!.trim().split("/");
  return accepted.some((entry) => {
    const e = entry.toLowerCase();
    return e === "*/*" || e === essence!.trim() || e === `${type}/*`;
  });
}
