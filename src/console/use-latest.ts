/**
 * Only the latest request of a page settles: `latest(p)` hands on `p`'s outcome unless another
 * request was started through the same `latest` since, in which case the older answer (arriving
 * late, after a quick change of page or filter) is dropped instead of overwriting the newer one.
 */
import { useRef } from 'preact/hooks';

export function useLatest(): <T>(p: Promise<T>) => Promise<T> {
  const n = useRef(0);
  return <T>(p: Promise<T>) => {
    const mine = ++n.current;
    return new Promise<T>((resolve, reject) => {
      p.then(
        (v) => mine === n.current && resolve(v),
        (e: unknown) => mine === n.current && reject(e),
      );
    });
  };
}
