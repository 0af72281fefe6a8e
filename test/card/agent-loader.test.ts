import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { loadAgent } from "../../src/agents/agent-loader.js";

const fixtures = resolve("test/card/fixtures");
const fixture = (name: string) => relative(process.cwd(), join(fixtures, name));

describe("agent loader", () => {
  test.each([undefined, "", "  "])("no module path (%p) loads the built-in demo agent", async (path) => {
    const agent = await loadAgent(path);
    expect(typeof agent.execute).toBe("function");
    expect(agent.card?.skills?.length).toBeGreaterThan(0);
  });

  test("loads a plain object default export, path relative to the working directory", async () => {
    const agent = await loadAgent(fixture("object-agent.mjs"));
    expect(agent.card?.name).toBe("Object agent");
    expect(typeof agent.execute).toBe("function");
  });

  test("accepts an absolute path", async () => {
    const agent = await loadAgent(join(fixtures, "object-agent.mjs"));
    expect(agent.card?.name).toBe("Object agent");
  });

  test("calls an async factory default export", async () => {
    expect((await loadAgent(fixture("factory-agent.mjs"))).card?.name).toBe("Factory agent");
  });

  test("uses the named export `agent` when there is no default export", async () => {
    expect((await loadAgent(fixture("named-agent.mjs"))).card?.name).toBe("Named agent");
  });

  test("constructs a class default export", async () => {
    expect((await loadAgent(fixture("class-agent.mjs"))).card?.name).toBe("Class agent");
  });

  test("a missing file is reported with its path", async () => {
    await expect(loadAgent("test/card/fixtures/nope.mjs")).rejects.toThrow(
      /agent module "test\/card\/fixtures\/nope\.mjs" was not found \(looked for .*nope\.mjs\)/,
    );
  });

  test("a directory is not an agent module", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-loader-"));
    try {
      await expect(loadAgent(dir)).rejects.toThrow(/is not a file/);
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  test("a module without a default export or `agent` is refused", async () => {
    await expect(loadAgent(fixture("no-default.mjs"))).rejects.toThrow(/"test\/card\/fixtures\/no-default\.mjs" has no default export/);
  });

  test("a default export without execute() is refused", async () => {
    await expect(loadAgent(fixture("no-execute.mjs"))).rejects.toThrow(/no-execute\.mjs"'s default export has no execute\(\) method/);
  });

  test("a factory whose result has no execute() is refused", async () => {
    await expect(loadAgent(fixture("factory-no-execute.mjs"))).rejects.toThrow(
      /factory-no-execute\.mjs"'s default export returned an object that has no execute\(\) method/,
    );
  });

  test("a factory that throws is reported with the module name and the cause", async () => {
    await expect(loadAgent(fixture("factory-throws.mjs"))).rejects.toThrow(/factory-throws\.mjs"'s default export threw .*missing API key/);
  });

  test("a module that does not parse is reported with its name", async () => {
    await expect(loadAgent(fixture("syntax-error.mjs"))).rejects.toThrow(/syntax-error\.mjs" could not be loaded/);
  });
});
