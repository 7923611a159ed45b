/**
 * The event list of a task: one row per event (seq, type, agent, message); a tool's arguments
 * (TOOL_INVOKED) and observation (TOOL_OBSERVATION), and any other payload, open in a
 * <details> so the list stays short and keyboard-operable.
 */
import { json } from './format.js';

export interface EventRow {
  seq: number;
  type: string;
  agent_id: string;
  message: string;
  payload?: Record<string, unknown>;
}

function payloadLabel(e: EventRow): string {
  if (e.type === 'TOOL_INVOKED') return 'Arguments';
  if (e.type === 'TOOL_OBSERVATION') return 'Observation';
  return 'Payload';
}

function payloadOf(e: EventRow): unknown {
  const p = e.payload;
  if (!p) return undefined;
  if (e.type === 'TOOL_INVOKED' && 'arguments' in p) return p.arguments;
  return p;
}

export function EventList({ events, label }: { events: EventRow[]; label: string }) {
  if (!events.length) return <p class="muted">No events yet.</p>;
  return (
    <ol class="events" aria-label={label}>
      {events.map((e) => {
        const p = payloadOf(e);
        const tool = e.type.startsWith('TOOL_');
        return (
          <li key={e.seq} data-seq={e.seq} class={tool ? 'event tool' : 'event'}>
            <span class="seq">#{e.seq}</span> <span class="type">{e.type}</span>
            {e.agent_id ? <span class="agent"> · {e.agent_id}</span> : null}
            {e.message ? <div class="message">{e.message}</div> : null}
            {p !== undefined ? (
              <details open={false}>
                <summary>{payloadLabel(e)}</summary>
                <pre tabIndex={0}>{json(p)}</pre>
              </details>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}
