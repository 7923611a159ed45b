/**
 * Channels and daemons: the caller's messaging channels (GET /api/v1/channels), each with its
 * webhook URL (POST /api/v1/channels/{channel_id}/webhook: to paste into the platform), its
 * agent, enable or disable (PUT {enabled}) and delete after a confirm step (DELETE);
 * credentials are write-only and never shown. Below: the new-channel form (channels-form.tsx)
 * and the connected daemons (channels-daemons.tsx).
 */
import { useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { ChannelForm, TYPE_NAMES } from './channels-form.js';
import { DaemonsSection } from './channels-daemons.js';
import { json, time } from './format.js';
import { ConfirmDelete } from './confirm-delete.js';
import { baseUrl, call, messageOf } from './session.js';
import { useList } from './use-list.js';

async function load() {
  return call(async (api) => ok(await api.GET('/api/v1/channels')));
}
type Channel = Awaited<ReturnType<typeof load>>[number];

const webhookUrl = (id: string) => `${baseUrl}/api/v1/channels/${encodeURIComponent(id)}/webhook`;

function ChannelItem({ c, onChanged }: { c: Channel; onChanged: (msg: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [copied, setCopied] = useState<string>();
  const url = webhookUrl(c.id);
  const uid = `webhook-${c.id}`;
  const agent = typeof c.config.agent_name === 'string' ? c.config.agent_name : '';
  const { agent_name: _agent, ...otherConfig } = c.config;

  const run = async (fn: () => Promise<string>) => {
    setBusy(true);
    setError(undefined);
    try {
      onChanged(await fn());
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  const toggle = () =>
    run(async () => {
      const body = { enabled: !c.enabled };
      await call(async (api) => ok(await api.PUT('/api/v1/channels/{id}', { params: { path: { id: c.id } }, body })));
      return `Channel “${c.name}” ${body.enabled ? 'enabled' : 'disabled'}.`;
    });
  const remove = () =>
    run(async () => {
      await call(async (api) => ok(await api.DELETE('/api/v1/channels/{id}', { params: { path: { id: c.id } } })));
      return `Channel “${c.name}” deleted.`;
    });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied('Copied.');
    } catch {
      const input = document.getElementById(uid) as HTMLTextAreaElement | null;
      input?.focus();
      input?.select();
      setCopied('Selected: copy it with your keyboard or menu.');
    }
  };

  return (
    <li class="card channel" data-testid="channel" data-id={c.id} aria-labelledby={`ch-${c.id}`}>
      <h3 id={`ch-${c.id}`}>{c.name}</h3>
      <dl class="facts">
        <dt>Platform</dt>
        <dd>{TYPE_NAMES[c.type] ?? c.type}</dd>
        <dt>State</dt>
        <dd data-testid="channel-enabled">{c.enabled ? 'enabled' : 'disabled'}</dd>
        <dt>Agent</dt>
        <dd>{agent || <span class="muted">default routing</span>}</dd>
        <dt>Credentials</dt>
        <dd class="muted">write-only: stored encrypted, never shown</dd>
        <dt>Created</dt>
        <dd>{time(c.created_at)}</dd>
      </dl>
      {Object.keys(otherConfig).length ? (
        <pre tabIndex={0} aria-label={`Other configuration of ${c.name}`}>
          {json(otherConfig)}
        </pre>
      ) : null}
      <label for={uid}>Webhook URL (paste into {TYPE_NAMES[c.type] ?? c.type})</label>
      <div class="copy-field">
        <textarea id={uid} class="mono webhook-url" rows={3} readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={() => void copy()} aria-describedby={`${uid}-copied`}>
          Copy
        </button>
      </div>
      <p id={`${uid}-copied`} class="notice-line" role="status">
        {copied ?? ''}
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <div class="channel-actions">
        <button type="button" disabled={busy} onClick={() => void toggle()}>
          {c.enabled ? 'Disable' : 'Enable'}
        </button>
        <ConfirmDelete
          what="channel"
          busy={busy}
          question={`Delete the channel “${c.name}” permanently? Its webhook URL stops working.`}
          onConfirm={() => void remove()}
        />
      </div>
    </li>
  );
}

export function ChannelsPage() {
  const { list, error, refresh } = useList(load);
  const [notice, setNotice] = useState<string>();
  const changed = (msg: string) => {
    setNotice(msg);
    refresh();
  };

  return (
    <section aria-labelledby="page-title" class="sc-page">
      <h1 id="page-title" tabIndex={-1}>
        Channels and daemons
      </h1>
      <p class="muted">
        A channel connects a chat platform: the platform posts its messages to the channel's webhook URL, and the answers go back to the thread.
      </p>
      <section aria-labelledby="channels-title">
        <div class="toolbar section-head">
          <h2 id="channels-title">Channels</h2>
          <button type="button" onClick={refresh}>
            Refresh channels
          </button>
        </div>
        <p class="notice-line" role="status" data-testid="channels-notice">
          {notice ?? ''}
        </p>
        <p class="error" role="alert">
          {error ?? ''}
        </p>
        {list === undefined ? (
          error ? null : (
            <p class="muted">Loading…</p>
          )
        ) : list.length === 0 ? (
          <p class="muted">No channels yet.</p>
        ) : (
          <ul class="channels" aria-label="Your channels">
            {list.map((c) => (
              <ChannelItem key={c.id} c={c} onChanged={changed} />
            ))}
          </ul>
        )}
      </section>
      <ChannelForm onCreated={(_id, name) => changed(`Channel “${name}” created: paste its webhook URL into the platform.`)} />
      <DaemonsSection />
    </section>
  );
}
