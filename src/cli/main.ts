#!/usr/bin/env node
/** The `a2a` bin: runs one command line against the process's terminal. */
import { runCli } from "./run.js";

// A reader that goes away (`a2a list | head`) is not an error.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(0);
  throw e;
});

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  onInterrupt(handler) {
    // While a call runs, Ctrl-C cancels that call; a second Ctrl-C exits at once.
    const onSigint = () => {
      process.once("SIGINT", () => process.exit(130));
      handler();
    };
    process.once("SIGINT", onSigint);
    return () => process.removeListener("SIGINT", onSigint);
  },
});
process.exitCode = code;
