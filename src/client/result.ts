/**
 * `ok(await client.GET(...))`: the data of an openapi-fetch result, typed as the operation's
 * success body, or an ApiError when the service answered with an error status.
 */
import { apiErrorOf } from './errors.js';

/** What every openapi-fetch call resolves to. */
export interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The success body of a result type (undefined for an answer without one, such as 204). */
export type DataOf<R> = R extends { data: infer D } ? ([D] extends [never] ? undefined : D) : never;

/** The data of a successful result; throws the ApiError of an error answer. */
export function ok<R extends FetchResult>(result: R): DataOf<R> {
  if (!result.response.ok || result.error !== undefined) throw apiErrorOf(result.response, result.error);
  return result.data as DataOf<R>;
}
