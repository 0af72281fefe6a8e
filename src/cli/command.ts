import type { ParseArgsConfig } from "node:util";
import { UsageError } from "./exit-codes.js";
import type { ConnectionOptions } from "./connection.js";
import type { Output, OutputStream } from "./output.js";
import type { A2ATransport, BindingName } from "./transport.js";

/** What a command file exports, and what it gets to run. */

export type OptionSpecs = NonNullable<ParseArgsConfig["options"]>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** The process around the CLI; tests pass their own. */
export interface CliIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly env: Record<string, string | undefined>;
  /** Registers a Ctrl-C (SIGINT) handler for the length of a call; returns its remover. */
  onInterrupt(handler: () => void): () => void;
}

export interface CommandContext {
  readonly out: Output;
  readonly io: CliIo;
  /** Positional arguments after the command's name. */
  readonly args: readonly string[];
  /** The command's own options (and the global ones). */
  readonly values: OptionValues;
  readonly connection: ConnectionOptions;
  /**
   * Connects on first use (resolving --card if given) over the chosen binding, or `binding` for a
   * command that speaks only one; the tenant comes from --tenant or the card.
   */
  connect(binding?: BindingName): Promise<{ client: A2ATransport; tenant: string }>;
}

export interface Command {
  readonly name: string;
  /** One line for `a2a --help`. */
  readonly summary: string;
  /** Usage lines and option help for `a2a NAME --help`. */
  readonly help: string;
  readonly options: OptionSpecs;
  /** Resolves to the exit code (0 if nothing is returned). */
  run(ctx: CommandContext): Promise<number | void>;
}

/** A positional argument the command needs. */
export function required(ctx: CommandContext, index: number, name: string): string {
  const value = ctx.args[index];
  if (!value) throw new UsageError(`missing ${name}`);
  return value;
}

/** A string option's value (the last one, when given more than once). */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  if (Array.isArray(v)) return v[v.length - 1];
  return typeof v === "string" ? v : undefined;
}

/** An integer option's value, checked. */
export function intOption(values: OptionValues, name: string, min: number, max: number): number | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}
