/**
 * The confirm step of a deletion (a schedule, a channel, a session): a button that, pressed, becomes a
 * question with "Delete permanently" and "Cancel". The question takes the focus (read out, and
 * Tab goes on to its buttons); Cancel gives the focus back to the first button. Escape cancels.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

export function ConfirmDelete({ what, question, busy, onConfirm }: { what: string; question: string; busy?: boolean; onConfirm: () => void }) {
  const [asking, setAsking] = useState(false);
  const askRef = useRef<HTMLParagraphElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);

  // Before the browser paints: a key pressed right after the question appears goes where the focus is shown.
  useLayoutEffect(() => {
    if (asking) askRef.current?.focus();
    else if (wasAsking.current) buttonRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button type="button" class="danger" ref={buttonRef} disabled={busy} onClick={() => setAsking(true)}>
        Delete {what}
      </button>
    );
  }
  return (
    <div
      class="confirm"
      role="group"
      aria-label={`Confirm: delete ${what}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setAsking(false);
      }}
    >
      <p tabIndex={-1} ref={askRef}>
        {question}
      </p>
      <div class="buttons">
        <button type="button" class="danger" disabled={busy} onClick={onConfirm}>
          Delete permanently
        </button>
        <button type="button" disabled={busy} onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}
