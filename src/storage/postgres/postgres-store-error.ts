/** The PostgreSQL store cannot be used as it is (a schema from a newer server, a failed schema step). */
export class PostgresStoreError extends Error {
  override name = "PostgresStoreError";
}
