import { PassThrough } from "node:stream";
import { createLogger } from "../../src/observability/logger.js";

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

describe("logger", () => {
  test("FND-LOG: json format writes one object per line without pid/hostname", async () => {
    const out = collect();
    const logger = await createLogger({ level: "info", format: "json", destination: out.stream });
    logger.info({ task_id: "t1" }, "hello");
    logger.debug("hidden at info");
    const lines = out
      .text()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: "hello", task_id: "t1" });
    expect(lines[0]).not.toHaveProperty("pid");
  });

  test("FND-LOG: pretty format writes readable lines", async () => {
    const out = collect();
    const logger = await createLogger({ level: "info", format: "pretty", destination: out.stream });
    logger.info({ method: "GetTask" }, "rpc");
    expect(out.text()).toMatch(/INFO.*rpc/);
    expect(out.text()).toContain('method: "GetTask"');
    expect(() => JSON.parse(out.text())).toThrow();
  });

  test("R-SEC-6: credentials in a logged object are redacted in both formats", async () => {
    for (const format of ["json", "pretty"] as const) {
      const out = collect();
      const logger = await createLogger({ level: "info", format, destination: out.stream });
      logger.info({ metadata: { authorization: "Bearer abc123", cookie: "sid=abc123" }, push: { token: "abc123" } }, "x");
      expect(out.text()).not.toContain("abc123");
      expect(out.text()).toContain("[redacted]");
    }
  });
});
