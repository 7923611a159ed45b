/**
 * A failure the command line reports in one line (no stack) with its exit code: 1 a failed
 * request or task, 2 a usage error.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    /** What caused it (e.g. the API client's ApiError of a non-2xx answer), for a command that words some answers its own way. */
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
