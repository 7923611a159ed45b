/**
 * A library loaded on first use instead of at start-up. Some tools and routes depend on heavy
 * packages (a headless browser driver, a DOM, the MCP SDK) that most deployments never call, yet
 * an import at the top of a file keeps them in every process's memory from start to end.
 */

/**
 * `load` (typically `() => import('x')`) run once, on the first call; every call shares its
 * promise, so concurrent first users wait for the one load.
 */
export function lazyImport<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}
