/**
 * The caller's connected daemons (GET /api/v1/daemon/status, gathered from every gateway):
 * each connection's id, since when, and the claims it holds (won, not replied, lease still
 * running). Read on opening and on Refresh; says where a daemon connects (GET /v1/ws/messages).
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { time } from './format.js';
import { baseUrl, call, messageOf } from './session.js';

async function load() {
  return call(async (api) => ok(await api.GET('/api/v1/daemon/status')));
}
type Status = Awaited<ReturnType<typeof load>>;

export function DaemonsSection() {
  const [status, setStatus] = useState<Status>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const refresh = () => {
    setBusy(true);
    load()
      .then(
        (s) => {
          setStatus(s);
          setError(undefined);
        },
        (err) => setError(messageOf(err)),
      )
      .finally(() => setBusy(false));
  };
  useEffect(refresh, []);
  const wsUrl = `${baseUrl.replace(/^http/, 'ws')}/v1/ws/messages`;

  return (
    <section aria-labelledby="daemons-title" class="daemons">
      <div class="toolbar section-head">
        <h2 id="daemons-title">Connected daemons</h2>
        <button type="button" disabled={busy} onClick={refresh}>
          Refresh daemons
        </button>
      </div>
      <p class="muted hint">
        A daemon connects to <code>{wsUrl}</code> with your credentials and is offered the messages of your channels; the first to claim one answers it.
        Messages no daemon claims run as tasks.
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <p role="status" data-testid="daemon-count">
        {status === undefined ? 'Loading…' : status.count === 0 ? 'No daemon connected.' : `${status.count} daemon${status.count === 1 ? '' : 's'} connected.`}
      </p>
      {status?.daemons.length ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Connected daemons, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Connection</th>
                <th scope="col">Connected since</th>
                <th scope="col">Claims held</th>
              </tr>
            </thead>
            <tbody>
              {status.daemons.map((d) => (
                <tr key={d.connection_id} data-testid="daemon">
                  <td>
                    <code>{d.connection_id}</code>
                  </td>
                  <td>
                    <time dateTime={d.connected_since}>{time(d.connected_since)}</time>
                  </td>
                  <td>{d.claims_held}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
