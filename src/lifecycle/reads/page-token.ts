import { createHmac, timingSafeEqual } from "node:crypto";
import type { ListCursor } from "../ports/task-repository.js";
import { InvalidRequestError } from "../model/errors.js";

/**
 * Opaque ListTasks page tokens: a keyset position plus a digest of the filters, signed with
 * a server secret so that a token this server did not issue (or issued for other filters)
 * is refused with INVALID_ARGUMENT (ruling A-13) instead of silently listing something else.
 */
export class PageTokenCodec {
  constructor(private readonly secret: Buffer) {}

  encode(cursor: ListCursor, filters: string): string {
    const body = Buffer.from(JSON.stringify([cursor.statusMicros, cursor.taskId])).toString("base64url");
    return `${body}.${this.sign(body, filters)}`;
  }

  decode(token: string, filters: string): ListCursor {
    const refuse = () =>
      InvalidRequestError.field(
        "page_token",
        "was not issued by this server for this query; send the next_page_token of the previous page with the same filters, or leave it empty for the first page",
      );
    const [body, signature, extra] = token.split(".");
    if (!body || !signature || extra !== undefined) throw refuse();
    const expected = Buffer.from(this.sign(body, filters));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw refuse();
    const parsed: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    if (!Array.isArray(parsed) || typeof parsed[0] !== "number" || typeof parsed[1] !== "string") throw refuse();
    return { statusMicros: parsed[0], taskId: parsed[1] };
  }

  private sign(body: string, filters: string): string {
    return createHmac("sha256", this.secret).update(body).update("\u0000").update(filters).digest("base64url").slice(0, 22);
  }
}
