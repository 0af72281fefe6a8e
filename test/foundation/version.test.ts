/** Both bins say which version they are, and the server logs it when it starts. */
import { spawn, execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { packageVersion } from "../../src/version.js";

const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("versions", () => {
  test("packageVersion() is package.json's version", () => {
    expect(packageVersion()).toBe(version);
  });

  test("a2a-grpc-server --version and a2a --version print it and exit 0", async () => {
    const server = await run(process.execPath, ["--import", "tsx", "src/main.ts", "--version"]);
    expect(server.stdout).toBe(`a2a-grpc-server ${version}\n`);
    const cli = await run(process.execPath, ["--import", "tsx", "src/cli/main.ts", "--version"]);
    expect(cli.stdout).toBe(`a2a ${version}\n`);
  });

  test("the start-up log line carries the version", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: { PATH: process.env.PATH, A2A_LISTEN: "127.0.0.1:0", A2A_CARD_LISTEN: "off", A2A_STORE: "memory", A2A_LOG_FORMAT: "json" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let buffer = "";
        child.stdout.on("data", (d: Buffer) => {
          buffer += d.toString();
          const found = buffer.split("\n").find((l) => l.includes('"msg":"listening on '));
          if (found) resolve(JSON.parse(found) as Record<string, unknown>);
        });
        child.once("exit", (code) => reject(new Error(`exited ${code} before listening`)));
      });
      expect(line.version).toBe(version);
    } finally {
      child.kill("SIGTERM");
    }
  });
});
