/**
 * The CLI's exit codes, so that scripts can tell who is at fault.
 * Documented in the README ("Command-line client") and in `a2a --help`.
 */
export const ExitCode = {
  /** The command did what was asked. */
  ok: 0,
  /** The server answered with a gRPC error that is not an A2A error (INVALID_ARGUMENT, UNAUTHENTICATED, INTERNAL, ...). */
  serverError: 1,
  /** The command line is wrong: unknown command or option, missing argument, unreadable file. */
  usage: 2,
  /** The server answered with an A2A error (google.rpc.ErrorInfo, domain a2a-protocol.org): TASK_NOT_FOUND, ... */
  a2aError: 3,
  /** No answer: the server or the card URL could not be reached, TLS failed, or the deadline passed. */
  connection: 4,
  /** Interrupted by Ctrl-C (SIGINT): the call was canceled, the task was not. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A wrong command line: printed with a hint to --help, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The server or the card could not be reached: exit code 4. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError";
}
