import { randomBytes } from "node:crypto";
import pg from "pg";

/** A database of its own on the run's throwaway PostgreSQL, so suites never see each other's rows. */
export interface TestDatabase {
  readonly url: string;
  /** Drops it (connections still open to it are ended first). */
  drop(): Promise<void>;
}

export function testPostgresUrl(): string {
  const url = process.env.A2A_TEST_POSTGRES_URL;
  const startFailure = process.env.A2A_TEST_POSTGRES_ERROR;
  if (startFailure !== undefined && startFailure !== "") {
    // One clear message, without the server log the global setup printed the start of.
    throw new Error(`the test PostgreSQL did not start, so this PostgreSQL suite cannot run: ${startFailure.split("\n")[0]}`);
  }
  if (url === undefined || url === "") {
    throw new Error("A2A_TEST_POSTGRES_URL is not set: run the tests through jest (its globalSetup starts PostgreSQL)");
  }
  return url;
}

export async function createTestDatabase(prefix = "t"): Promise<TestDatabase> {
  const admin = testPostgresUrl();
  const name = `${prefix}_${randomBytes(6).toString("hex")}`.toLowerCase();
  await withAdmin(admin, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin(admin, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
