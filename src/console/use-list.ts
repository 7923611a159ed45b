/**
 * A list a page shows and reads again after a change: `load` runs on mount and on `refresh()`;
 * a failure keeps the last list and gives the service's message.
 */
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './session.js';
import { useLatest } from './use-latest.js';

export function useList<T>(load: () => Promise<T[]>): { list: T[] | undefined; error: string | undefined; refresh: () => void } {
  const [list, setList] = useState<T[]>();
  const [error, setError] = useState<string>();
  const latest = useLatest();
  const refresh = () => {
    latest(load()).then(
      (l) => {
        setList(l);
        setError(undefined);
      },
      (err) => setError(messageOf(err)),
    );
  };
  useEffect(refresh, []);
  return { list, error, refresh };
}
