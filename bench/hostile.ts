/**
 * `npm run bench -- hostile [--cases=100000] [--seed=18] [--idle-s=30] [--malloc-arena-max=N]`:
 * the hostile-input suite's long run. The suite belongs to the tests (test/support/hostile-run.ts,
 * whose short run is test/hostile/hostile.test.ts); the bench starts it as a program, not as an
 * import, so bench/ and test/ stay apart.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export async function runHostileBench(args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/hostile-run.ts", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  const out: string[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => out.push(chunk));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`the hostile run exited with ${code}`);
  return out.join("").trimEnd();
}
