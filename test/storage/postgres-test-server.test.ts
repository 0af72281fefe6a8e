import pg from "pg";
import { createTestDatabase, testPostgresUrl } from "../support/postgres/database.js";

/**
 * The test PostgreSQL that jest's globalSetup starts (test/support/postgres/): on loopback,
 * a real server (PostgreSQL 17) with LISTEN/NOTIFY, one database per suite.
 */
describe("the throwaway test PostgreSQL", () => {
  it("listens on 127.0.0.1 only and is a real PostgreSQL 17", async () => {
    const url = new URL(testPostgresUrl());
    expect(url.hostname).toBe("127.0.0.1");
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      const { rows } = await client.query<{ v: string; listen: string }>(
        "SELECT current_setting('server_version_num') AS v, current_setting('listen_addresses') AS listen",
      );
      expect(Number(rows[0]!.v)).toBeGreaterThanOrEqual(170000);
      expect(rows[0]!.listen).toBe("127.0.0.1");
    } finally {
      await client.end();
    }
  });

  it("gives each suite a database of its own, and LISTEN/NOTIFY works", async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    const ca = new pg.Client({ connectionString: a.url });
    const cb = new pg.Client({ connectionString: b.url });
    await Promise.all([ca.connect(), cb.connect()]);
    try {
      await ca.query("CREATE TABLE only_here (x int)");
      await expect(cb.query("SELECT * FROM only_here")).rejects.toThrow(/does not exist/);
      await ca.query("LISTEN wake");
      const heard = new Promise<string | undefined>((resolve) => ca.once("notification", (n) => resolve(n.payload)));
      const other = new pg.Client({ connectionString: a.url });
      await other.connect();
      await other.query("SELECT pg_notify('wake', 'hello')");
      await other.end();
      expect(await heard).toBe("hello");
    } finally {
      await Promise.all([ca.end(), cb.end()]);
      await Promise.all([a.drop(), b.drop()]);
    }
  });
});
