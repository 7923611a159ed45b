/**
 * A failure the command line reports in one line (no stack) with its exit code: 1 a failed
 * request or task, 2 a usage error.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
