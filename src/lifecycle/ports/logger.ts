/** The slice of a pino-style logger the core uses, so the core does not depend on pino. */
export interface CoreLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const silentLogger: CoreLogger = { debug() {}, info() {}, warn() {}, error() {} };
