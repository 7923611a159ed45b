/**
 * The new-channel form: type (platform A or B), name, the type's credentials (password fields:
 * write-only, never shown back, cleared once sent) and the optional agent to route messages to
 * (config.agent_name). POST /api/v1/channels with only those fields; the service's refusal
 * (a missing credential, a duplicate name, ...) is shown as it comes.
 */
import { useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { call, messageOf } from './session.js';

export type ChannelType = 'platform_a' | 'platform_b';

export const TYPE_NAMES: Record<ChannelType, string> = { platform_a: 'Platform A', platform_b: 'Platform B' };

/** The credentials each type takes (all required), with their labels. */
const CREDENTIALS: Record<ChannelType, [string, string][]> = {
  platform_a: [
    ['signing_secret', 'Signing secret'],
    ['bot_token', 'Bot token'],
    ['app_id', 'App id'],
  ],
  platform_b: [
    ['channel_secret', 'Channel secret'],
    ['channel_access_token', 'Channel access token'],
  ],
};

export function ChannelForm({ onCreated }: { onCreated: (id: string, name: string) => void }) {
  const [type, setType] = useState<ChannelType>('platform_a');
  const [name, setName] = useState('');
  const [secrets, setSecrets] = useState<Record<string, string>>({});
  const [agent, setAgent] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const fields = CREDENTIALS[type];

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const credentials = Object.fromEntries(fields.map(([k]) => [k, secrets[k] ?? '']));
    const body = { type, name: name.trim(), credentials, ...(agent.trim() ? { config: { agent_name: agent.trim() } } : {}) };
    setBusy(true);
    try {
      const c = await call(async (api) => ok(await api.POST('/api/v1/channels', { body })));
      setName('');
      setSecrets({});
      setAgent('');
      onCreated(c.id, c.name);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="form channel-form" onSubmit={submit} aria-labelledby="new-channel" autocomplete="off">
      <h2 id="new-channel">New channel</h2>
      <div class="row">
        <div>
          <label for="channel-type">Platform</label>
          <select
            id="channel-type"
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value as ChannelType);
              setSecrets({});
            }}
          >
            {(Object.keys(TYPE_NAMES) as ChannelType[]).map((t) => (
              <option key={t} value={t}>
                {TYPE_NAMES[t]}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="channel-name">Name</label>
          <input id="channel-name" required maxLength={255} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
      </div>
      <fieldset>
        <legend>Credentials of {TYPE_NAMES[type]}</legend>
        <p class="muted hint">Stored encrypted and never shown again: the service does not return them.</p>
        {fields.map(([k, label]) => (
          <div key={`${type}-${k}`}>
            <label for={`channel-${k}`}>{label}</label>
            <input
              id={`channel-${k}`}
              type="password"
              required
              maxLength={4096}
              autocomplete="new-password"
              spellcheck={false}
              value={secrets[k] ?? ''}
              onInput={(e) => setSecrets({ ...secrets, [k]: e.currentTarget.value })}
            />
          </div>
        ))}
      </fieldset>
      <label for="channel-agent">Agent name (optional: route messages to this agent)</label>
      <input id="channel-agent" value={agent} onInput={(e) => setAgent(e.currentTarget.value)} />
      <p class="error" role="alert" data-testid="channel-form-error">
        {error ?? ''}
      </p>
      <button type="submit" class="primary" disabled={busy || !name.trim()}>
        {busy ? 'Creating…' : 'Create channel'}
      </button>
    </form>
  );
}
