import type { ThrowawayPostgres } from "./throwaway-postgres.js";

/** Jest globalTeardown: stops the run's PostgreSQL and removes its directory. */
export default async function teardown(): Promise<void> {
  const holder = globalThis as { __a2aPostgres?: ThrowawayPostgres };
  await holder.__a2aPostgres?.stop();
  holder.__a2aPostgres = undefined;
}
