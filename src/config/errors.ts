/** The error of a bad configuration value: names the variable, fails start-up. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`invalid configuration: ${variable}: ${reason}`);
  }
}
