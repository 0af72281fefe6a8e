/**
 * Issue 14: the README's "Try the demo agent" section, run as a user pastes it. Its two shell
 * blocks (the helpers, then the commands) run in bash against the real server with the demo agent,
 * through `buf curl` and `jq`, with only the port changed (the README's is the default 50051, a
 * test binds a free one). Ids are captured by the commands themselves, so no hand editing. The
 * table's rows that the commands do not show (reject, auth) are checked through the ts-proto client.
 */
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startA2AServer, type A2ATestServer } from "../support/a2a-server.js";
import { TaskState, sendForTask, textOf, userMessage } from "../e2e/e2e-helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

function demoSection(): string {
  const start = README.indexOf("## Try the demo agent");
  const end = README.indexOf("\n## ", start + 1);
  if (start < 0 || end < 0) throw new Error('README.md has no "Try the demo agent" section');
  return README.slice(start, end);
}

/** The section's ```sh blocks, in order. */
function shellBlocks(): string[] {
  return [...demoSection().matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function run(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const { NODE_OPTIONS: _jest, ...env } = process.env;
  return new Promise((resolve) => {
    execFile("bash", ["-c", script], { cwd: ROOT, env, timeout: 120_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** jq is a tool the README asks the user to install, not a project dependency. */
const hasJq = (() => {
  try {
    execFileSync("bash", ["-c", "command -v jq"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let s: A2ATestServer;
beforeAll(async () => {
  s = await startA2AServer(); // no agent given: the built-in demo agent, with its real timings
});
afterAll(() => s.close());

describe("README: Try the demo agent", () => {
  test("the section has the helper block and the command block, written for the default port", () => {
    const blocks = shellBlocks();
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toContain("URL=http://127.0.0.1:50051/lf.a2a.v1.A2AService");
    expect(blocks.join("\n")).not.toMatch(/TASK_ID|CONTEXT_ID/); // nothing to replace by hand
  });

  // Without jq the README's commands cannot run; it is a tool the README asks the user to install.
  (hasJq ? test : test.skip)(
    "the commands run as pasted and show what the table and their comments say",
    async () => {
      const script = ["set -eo pipefail", ...shellBlocks()].join("\n").replaceAll("127.0.0.1:50051", s.target);
      const { code, stdout, stderr } = await run(script);
      expect({ code, stderr: stderr.trim() === "" ? "" : stderr }).toEqual({ code: 0, stderr: "" });

      // hello: a bare Message with the keywords
      expect(stdout).toContain('"message": {');
      expect(stdout).toContain('You said: \\"hello\\". Start a message with one of these keywords');
      // story: the stream starts with the task in SUBMITTED, then WORKING, 4 chunks, COMPLETED
      const story = stdout.slice(stdout.indexOf('"task": {'), stdout.indexOf("The story is complete."));
      const states = [...story.matchAll(/"state": "(TASK_STATE_\w+)"/g)].map((m) => m[1]);
      expect(states).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
      expect(story.match(/"artifactUpdate"/g)).toHaveLength(4);
      expect(story.match(/"lastChunk": true/g)).toHaveLength(1);
      // fail: the status text carries the service's prefix
      expect(stdout).toContain("the agent failed: the demo was asked to fail\n");
      // trip: INPUT_REQUIRED, then the follow-up on the captured task id completes with the itinerary
      expect(stdout).toContain("TASK_STATE_INPUT_REQUIRED\n");
      expect(stdout).toContain("Itinerary to Lisbon");
      // long: the subscription saw steps, GetTask WORKING, CancelTask CANCELED, and the subscription ended (wait returned)
      // (GetTask and CancelTask print bare states; the background subscription's jq prints quoted lines
      // when it ends, which may land between them.)
      expect(stdout).toMatch(/^TASK_STATE_WORKING\n(?:"[^\n]*"\n)*TASK_STATE_CANCELED$/m);
      expect(stdout).toMatch(/^"TASK_STATE_WORKING"\n(?:"step \d+\/30"\n)+"TASK_STATE_CANCELED"$/m); // the snapshot, steps, the cancel
      expect(stdout).not.toMatch(/"step 30\/30"/);
      // ListTasks of the trip's context: its one task, COMPLETED
      const listed = stdout.slice(stdout.lastIndexOf('"tasks": ['));
      expect(listed.match(/"state": "TASK_STATE_COMPLETED"/g)).toHaveLength(1);
    },
    120_000,
  );

  test("the table's reject and auth rows, as the server behaves", async () => {
    const rejected = await sendForTask(s, userMessage("reject"));
    expect(rejected.status!.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(rejected.history).toHaveLength(2); // SUBMITTED -> REJECTED: no WORKING message between
    expect(textOf(rejected.status!.message)).toContain("rejects this task on purpose");
    const auth = await sendForTask(s, userMessage("auth"));
    expect(auth.status!.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(textOf(auth.status!.message)).toMatch(/out of band/);
    const done = await sendForTask(s, userMessage("ok", { taskId: auth.id }));
    expect(done.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});
