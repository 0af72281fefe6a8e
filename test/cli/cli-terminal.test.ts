/**
 * The a2a CLI in a real terminal: tmux runs `a2a watch` in a pane (stdout is a TTY there),
 * the test reads the screen with capture-pane and presses Ctrl-C with send-keys.
 * tmux runs on a private socket, killed at the end.
 */
import { execFileSync } from "node:child_process";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { a2a, cliCommand, ROOT, until } from "./cli-helpers.js";

const SOCKET = `a2a-cli-test-${process.pid}`;
const tmux = (...args: string[]) => execFileSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8", cwd: ROOT });
const screen = (session: string) => tmux("capture-pane", "-p", "-t", session);
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer();
});
afterAll(async () => {
  try {
    tmux("kill-server");
  } catch {
    // no session left
  }
  await s.close();
});

/** Starts `a2a ARGS` in a new 110x30 pane; the pane stays after the command, showing its exit code. */
function startInTerminal(session: string, args: string[]): void {
  const command = cliCommand([...args, "--server", s.target])
    .map(quote)
    .join(" ");
  tmux("new-session", "-d", "-s", session, "-x", "110", "-y", "30", "-e", "NO_COLOR=", `${command}; echo "exit code $?"; sleep 60`);
}

async function newTask(text: string): Promise<string> {
  const r = await a2a(["send", text, "--no-wait", "--server", s.target, "--json"]);
  return r.json().task.id as string;
}

describe("a2a watch in a terminal (tmux)", () => {
  test("A-18: shows progress live, the artifact, and a summary when the task ends", async () => {
    // Long enough that the CLI (node + tsx, cold, on a loaded machine) is watching before the job ends.
    const id = await newTask("long 15");
    startInTerminal("done", ["watch", id]);
    // Live: a progress line is on screen while the task still runs.
    await until(() => /WORKING {2}step \d+\/15/.test(screen("done")), "a progress line", 45_000);
    expect(screen("done")).not.toContain("exit code");
    await until(() => screen("done").includes("exit code"), "the watch to end", 45_000);
    const text = screen("done");
    expect(text).toContain(`task ${id}`);
    expect(text).toMatch(/WORKING {2}step 15\/15/);
    expect(text).toContain("exit code 0");
    expect(text).toContain("── report");
    expect(text).toContain("Ran 15 steps of one second each without being canceled.");
    expect(text).toMatch(/COMPLETED {2}The long job is done\./);
    expect(text).toMatch(/── ended COMPLETED after [\d.]+ s · 1 artifact/);
  }, 100_000);

  test("Ctrl-C stops watching (exit 130) and the task goes on", async () => {
    const id = await newTask("long 120");
    startInTerminal("stop", ["watch", id]);
    await until(() => /step \d+\/120/.test(screen("stop")), "progress on screen", 45_000);
    tmux("send-keys", "-t", "stop", "C-c");
    await until(() => screen("stop").includes("exit code 130"), "the watch to stop", 10_000);
    expect(screen("stop")).toMatch(/stopped watching after [\d.]+ s; the task goes on \(a2a get /);
    const after = await a2a(["get", id, "--server", s.target, "--json"]);
    expect(after.json().status.state).toBe("TASK_STATE_WORKING");
    await a2a(["cancel", id, "--server", s.target]);
  }, 100_000);
});
