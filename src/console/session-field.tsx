/**
 * The optional session id of a run (an agent's, a tool's): a labelled input with its help text
 * tied to it. Empty means the service's default (a new session).
 */
export function SessionField({ id, help, value, onInput }: { id: string; help: string; value: string; onInput: (v: string) => void }) {
  return (
    <div class="field">
      <label for={id}>Session id (optional)</label>
      <input id={id} name="session_id" aria-describedby={`${id}-help`} value={value} onInput={(e) => onInput(e.currentTarget.value)} />
      <p class="help" id={`${id}-help`}>
        {help}
      </p>
    </div>
  );
}
