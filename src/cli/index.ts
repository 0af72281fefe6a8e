/** The `a2a` command-line client: a client of any A2A v1.0 server (gRPC, JSON-RPC or HTTP+JSON), like any other. */
export { runCli } from "./run.js";
export type { CliIo } from "./command.js";
export { ExitCode } from "./exit-codes.js";
