/**
 * One invalid setting. The message names the setting the way an operator set it
 * (environment variable and flag), so main can print it as a single line and exit 2.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
