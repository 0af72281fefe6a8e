/*
 * Tenant names an HTTP+JSON client could not address (BQ-12): the tenant is the first path
 * segment of the `/{tenant}/…` routes, so a tenant spelled like a literal first segment of the
 * un-prefixed routes (`/tasks/…`, `/message:send`, `/extendedAgentCard`), of v0.3's routes (`/v1/…`)
 * or of the card (`/.well-known/…`) would be read as that route. Such names are refused where
 * tenants are configured. test/rest/reserved-tenants.test.ts keeps the list in step with the
 * routes the proto declares.
 */
export const RESERVED_TENANTS: ReadonlySet<string> = new Set(["tasks", "message", "message:send", "message:stream", "extendedAgentCard", "v1", ".well-known"]);
