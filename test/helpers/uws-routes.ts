/**
 * Records every route the gateway registers on its uWebSockets.js app, without changing the
 * app: the gateway's route table as the server sees it. Use from a test file with
 *
 *   const registered = vi.hoisted(() => [] as RegisteredRoute[]);
 *   vi.mock('uWebSockets.js', async (orig) => (await import('./helpers/uws-routes.js')).recordRoutes(await orig(), registered));
 */
export interface RegisteredRoute {
  /** The uWS method name: get, post, put, patch, del, any, options, ws, ... */
  method: string;
  pattern: string;
}

const ROUTE_METHODS = new Set(['get', 'post', 'put', 'patch', 'del', 'any', 'options', 'head', 'connect', 'trace', 'ws']);

export function recordRoutes<M>(mod: M, registered: RegisteredRoute[]): M {
  const uws = (mod as { default: { App: (...args: unknown[]) => Record<string | symbol, unknown> } }).default;
  const App = (...args: unknown[]) => {
    const app = uws.App(...args);
    const proxy: Record<string | symbol, unknown> = new Proxy(app, {
      get(target, prop) {
        const v = Reflect.get(target, prop) as unknown;
        if (typeof v !== 'function') return v;
        if (typeof prop === 'string' && ROUTE_METHODS.has(prop)) {
          return (pattern: string, ...rest: unknown[]) => {
            registered.push({ method: prop, pattern });
            (v as (...a: unknown[]) => unknown).call(target, pattern, ...rest);
            return proxy;
          };
        }
        return (v as (...a: unknown[]) => unknown).bind(target);
      },
    });
    return proxy;
  };
  return { ...(mod as object), default: { ...uws, App } } as M;
}
