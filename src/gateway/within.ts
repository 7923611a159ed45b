/**
 * A promise bounded in time: NATS client calls that can wait without end (an ordered consumer
 * created while its stream has no leader) fail after `ms` instead, and what the call gives
 * after that is handed to `late` so that it can be closed rather than leak.
 */
export function within<T>(p: Promise<T>, what: string, ms: number, late?: (v: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const stall = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      reject(new Error(`${what} stalled for ${ms} ms`));
    }, ms);
  });
  void p.then(
    (v) => {
      if (expired) late?.(v);
    },
    () => {},
  );
  return Promise.race([p, stall]).finally(() => clearTimeout(timer));
}
