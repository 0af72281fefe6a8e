import { pino, type Logger, type LevelWithSilent } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  readonly level: LevelWithSilent;
  readonly format: "json" | "pretty";
  /** Where lines go; stdout by default. Tests pass a stream to read the lines. */
  readonly destination?: NodeJS.WritableStream;
}

/**
 * Paths pino blanks out wherever they appear in a log object, as a second line of
 * defence: the RPC log never logs credentials, but a stray `metadata` or `headers`
 * object must not leak them either (R-SEC-6).
 */
export const REDACTED_PATHS = [
  "authorization",
  "*.authorization",
  "*.*.authorization",
  "cookie",
  "*.cookie",
  "*.*.cookie",
  "token",
  "*.token",
  "credentials",
  "*.credentials",
];

/**
 * The service's logger: one JSON object per line, or pino-pretty's readable lines.
 * pino-pretty is only a dev dependency; when it is missing, the logger falls back to
 * JSON and says so, rather than failing to start.
 */
export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const base = {
    level: options.level,
    base: null, // no pid/hostname on every line
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
  } as const;
  if (options.format === "pretty") {
    try {
      const { default: pretty } = await import("pino-pretty");
      const stream = pretty({
        sync: true,
        colorize: options.destination === undefined && Boolean(process.stdout.isTTY),
        translateTime: "SYS:HH:MM:ss.l",
        ignore: "pid,hostname",
        ...(options.destination ? { destination: options.destination } : {}),
      });
      return pino(base, stream);
    } catch {
      const logger = pino(base, options.destination ?? pino.destination({ dest: 1, sync: true }));
      logger.warn("A2A_LOG_FORMAT=pretty needs the pino-pretty package, which is not installed; logging JSON");
      return logger;
    }
  }
  return pino(base, options.destination ?? pino.destination({ dest: 1, sync: true }));
}
