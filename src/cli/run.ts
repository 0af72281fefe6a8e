import { parseArgs } from "node:util";
import { packageVersion } from "../version.js";
import { A2AClient } from "./a2a-client.js";
import { stringOption, type CliIo, type Command, type CommandContext, type OptionSpecs, type OptionValues } from "./command.js";
import { cancelCommand } from "./commands/cancel.js";
import { cardCommand } from "./commands/card.js";
import { getCommand } from "./commands/get.js";
import { healthCommand } from "./commands/health.js";
import { listCommand } from "./commands/list.js";
import { pushCommand } from "./commands/push.js";
import { sendCommand } from "./commands/send.js";
import { watchCommand } from "./commands/watch.js";
import {
  callMetadata,
  channelCredentials,
  DEFAULT_SERVER,
  httpDispatcher,
  httpHeaders,
  resolveTarget,
  type ConnectionOptions,
  type Target,
} from "./connection.js";
import { ConnectionError, ExitCode, UsageError } from "./exit-codes.js";
import { JsonRpcTransport } from "./jsonrpc-transport.js";
import { Output } from "./output.js";
import { RestTransport } from "./rest-transport.js";
import { BindingCallError, decodeRpcFailure, isServiceError, type RpcFailure } from "./rpc-error.js";
import { BINDINGS, type A2ATransport, type BindingName } from "./transport.js";

/** The `a2a` command line: global options, the command table, errors to exit codes. */

const COMMANDS: readonly Command[] = [cardCommand, sendCommand, getCommand, listCommand, cancelCommand, watchCommand, pushCommand, healthCommand];

const GLOBAL_OPTIONS: OptionSpecs = {
  binding: { type: "string", short: "b" },
  server: { type: "string", short: "s" },
  card: { type: "string" },
  tenant: { type: "string" },
  tls: { type: "boolean" },
  ca: { type: "string" },
  cert: { type: "string" },
  key: { type: "string" },
  token: { type: "string" },
  "api-key": { type: "string" },
  "api-key-header": { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  human: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
};

const GLOBAL_HELP = `Usage: a2a COMMAND [ARGS] [options]

A client for A2A v1.0 agents over gRPC, JSON-RPC or HTTP+JSON (REST).

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(8)} ${c.summary}`).join("\n")}

Where to connect (the first that is given):
  -s, --server HOST:PORT   the gRPC server (env A2A_SERVER; grpcs://HOST:PORT for TLS);
                           with --binding jsonrpc|rest: the interface URL (http(s)://HOST:PORT/PATH)
  --card URL               discover the server from its agent card (env A2A_CARD_URL)
                           (default: ${DEFAULT_SERVER})
  -b, --binding BINDING    grpc, jsonrpc or rest (HTTP+JSON): which of the card's interfaces to use
                           (default: the card's first one the CLI speaks; with --server: grpc)
  --tenant TENANT          the tenant to send (default: the card's, or none)

Security:
  --tls                    TLS with the system's CAs (implied by --ca, --cert, grpcs://, https://)
  --ca PATH                PEM CA bundle to verify the server
  --cert PATH --key PATH   client certificate and key (mutual TLS)
  --token TOKEN            bearer token: authorization: Bearer TOKEN (env A2A_TOKEN)
  --api-key KEY            API key (env A2A_API_KEY), in header --api-key-header (default x-api-key)

Output:
  --json                   JSON on stdout (JSON Lines for streams); the default when stdout is not a terminal
  --human                  human output even when piped
  --no-color               no colours (also NO_COLOR=1)
  --timeout SECONDS        deadline of each call (default: none; streams never have one)
  -h, --help               help (a2a COMMAND --help for a command)
  -V, --version            the version

Exit codes:
  0    done
  1    the server answered with an error that is not an A2A error (INVALID_ARGUMENT, UNAUTHENTICATED, ...), or the CLI failed
  2    usage error (unknown command or option, missing argument, unreadable file)
  3    the server answered with an A2A error (its ErrorInfo reason is printed: TASK_NOT_FOUND, ...)
  4    connection failure (server or card unreachable, TLS failure, deadline passed)
  130  interrupted by Ctrl-C (the call was canceled, the task goes on)`;

/** Finds the command's name: the first argument that is neither an option nor a global option's value. */
function findCommand(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return i + 1 < argv.length ? i + 1 : -1;
    if (arg.startsWith("--")) {
      const spec = GLOBAL_OPTIONS[arg.slice(2)];
      if (spec?.type === "string") i++;
    } else if (arg.startsWith("-") && arg.length === 2) {
      const spec = Object.values(GLOBAL_OPTIONS).find((o) => o.short === arg[1]);
      if (spec?.type === "string") i++;
    } else if (!arg.startsWith("-")) return i;
  }
  return -1;
}

function parse(argv: readonly string[], options: OptionSpecs): { values: OptionValues; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
    return { values: values as OptionValues, positionals };
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional argument.*$/s, ""));
  }
}

function timeoutMs(values: OptionValues): number | undefined {
  const raw = stringOption(values, "timeout");
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got "${raw}"`);
  return Math.round(seconds * 1000);
}

function bindingOption(values: OptionValues): BindingName | undefined {
  const raw = stringOption(values, "binding");
  if (raw === undefined) return undefined;
  const name = raw.toLowerCase();
  if (name in BINDINGS) return name as BindingName;
  // The card's spellings work too: GRPC, JSONRPC, HTTP+JSON.
  const byCardName = (Object.keys(BINDINGS) as BindingName[]).find((b) => BINDINGS[b] === raw.toUpperCase());
  if (byCardName) return byCardName;
  throw new UsageError(`--binding must be grpc, jsonrpc or rest, got "${raw.slice(0, 40)}"`);
}

function connectionOptions(values: OptionValues, env: CliIo["env"]): ConnectionOptions {
  const s = (name: string) => stringOption(values, name);
  const nonEmpty = (v: string | undefined) => (v === "" ? undefined : v);
  const server = s("server") ?? nonEmpty(env.A2A_SERVER);
  return {
    binding: bindingOption(values),
    // --server on the command line beats A2A_CARD_URL in the environment, and --card beats A2A_SERVER.
    server: s("card") !== undefined && s("server") === undefined ? undefined : server,
    card: s("card") ?? nonEmpty(env.A2A_CARD_URL),
    tenant: s("tenant"),
    tls: Boolean(values.tls),
    ca: s("ca"),
    cert: s("cert"),
    key: s("key"),
    token: s("token") ?? nonEmpty(env.A2A_TOKEN),
    apiKey: s("api-key") ?? nonEmpty(env.A2A_API_KEY),
    apiKeyHeader: s("api-key-header") ?? "x-api-key",
    timeoutMs: timeoutMs(values),
  };
}

/** Runs one command line; resolves to the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let out = new Output({ stdout: io.stdout, stderr: io.stderr, env: io.env });
  let client: A2ATransport | undefined;
  try {
    const at = findCommand(argv);
    const name = at >= 0 ? argv[at]! : undefined;
    const command = COMMANDS.find((c) => c.name === name);
    const rest = at >= 0 ? [...argv.slice(0, at), ...argv.slice(at + 1)] : [...argv];
    const { values, positionals } = parse(rest, { ...GLOBAL_OPTIONS, ...command?.options });
    out = new Output({
      stdout: io.stdout,
      stderr: io.stderr,
      env: io.env,
      json: values.json ? true : values.human ? false : undefined,
      noColor: Boolean(values["no-color"]),
    });

    if (values.version) {
      io.stdout.write(`a2a ${packageVersion()}\n`);
      return ExitCode.ok;
    }
    if (name === "help" || (!command && values.help)) {
      const topic = COMMANDS.find((c) => c.name === positionals[0]);
      io.stdout.write(`${topic ? topic.help : GLOBAL_HELP}\n`);
      return ExitCode.ok;
    }
    if (!command) throw new UsageError(name === undefined ? "missing command" : `unknown command "${name}"`);
    if (values.help) {
      io.stdout.write(`${command.help}\n`);
      return ExitCode.ok;
    }
    if (values.json && values.human) throw new UsageError("--json and --human exclude each other");

    const connection = connectionOptions(values, io.env);
    const ctx: CommandContext = {
      out,
      io,
      args: positionals,
      values,
      connection,
      async connect(binding) {
        const target = await resolveTarget(binding ? { ...connection, binding } : connection);
        client = transportFor(target, connection);
        await client.connect(connection.timeoutMs ?? 10_000);
        return { client, tenant: target.tenant };
      },
    };
    return (await command.run(ctx)) ?? ExitCode.ok;
  } catch (e) {
    return reportError(out, e);
  } finally {
    out.stopSpinner();
    client?.close();
  }
}

/** The client of the target's binding, with the credentials and TLS options. */
function transportFor(target: Target, connection: ConnectionOptions): A2ATransport {
  if (target.binding === "grpc") {
    return new A2AClient({
      address: target.address,
      credentials: channelCredentials(target, connection),
      metadata: callMetadata(connection),
      timeoutMs: connection.timeoutMs,
    });
  }
  const http = { headers: httpHeaders(connection), dispatcher: httpDispatcher(connection), timeoutMs: connection.timeoutMs };
  const url = new URL(target.address);
  return target.binding === "jsonrpc" ? new JsonRpcTransport(url, http) : new RestTransport(url, http);
}

function reportError(out: Output, e: unknown): number {
  if (e instanceof UsageError) {
    out.note(`a2a: ${e.message}\n${out.style("dim", "run a2a --help (or a2a COMMAND --help) for usage")}`);
    return ExitCode.usage;
  }
  if (e instanceof ConnectionError) {
    out.note(out.json ? JSON.stringify({ error: { kind: "connection", message: e.message } }) : `${out.style("red", "connection failed")}: ${e.message}`);
    return ExitCode.connection;
  }
  if (isServiceError(e) || e instanceof BindingCallError) {
    const failure = e instanceof BindingCallError ? e.failure : decodeRpcFailure(e);
    out.note(out.json ? JSON.stringify({ error: failureJson(failure) }) : describeFailure(out, failure));
    return failure.exitCode;
  }
  out.note(`a2a: ${e instanceof Error ? e.message : String(e)}`);
  return ExitCode.serverError;
}

function failureJson(f: RpcFailure) {
  const kind = f.exitCode === ExitCode.a2aError ? "a2a" : f.exitCode === ExitCode.connection ? "connection" : "status";
  return {
    kind,
    code: f.status,
    message: f.message,
    reason: f.reason,
    domain: f.domain,
    metadata: f.metadata,
    fieldViolations: f.fieldViolations,
    details: f.details,
  };
}

function describeFailure(out: Output, f: RpcFailure): string {
  if (f.exitCode === ExitCode.connection) return `${out.style("red", "connection failed")}: ${f.status}: ${f.message}`;
  const head = `${out.style("red", out.style("bold", f.reason ?? f.status))}: ${f.message}${f.reason ? out.style("dim", ` (${f.status})`) : ""}`;
  const lines = [head];
  for (const [k, v] of Object.entries(f.metadata ?? {})) lines.push(`  ${k}: ${v}`);
  for (const v of f.fieldViolations ?? []) lines.push(`  ${out.style("bold", v.field)}: ${v.description}`);
  if (f.retryDelay) lines.push(`  retry after ${f.retryDelay}`);
  if (f.requestId) lines.push(`  correlation id ${f.requestId}`);
  return lines.join("\n");
}
