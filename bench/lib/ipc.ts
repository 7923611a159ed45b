/**
 * Request/response over Node's IPC channel between the bench runner and its child processes.
 *
 * Runner side: `spawnChild()` (see proc.ts) returns a ChildProc whose `call(cmd, args)` sends
 * `{ id, cmd, args }` and resolves with the child's `{ id, ok, result | error }`; unsolicited
 * messages `{ ev, data }` from the child go to the handlers registered with `on(ev)`.
 * Child side: `serve(handlers)` answers calls and `emit(ev, data)` sends events. A child exits
 * when its IPC channel closes, so a crashed runner never leaves bench processes behind.
 */

export type Handler = (args: any) => unknown | Promise<unknown>;

export function serve(handlers: Record<string, Handler>, onExit?: () => void): void {
  if (!process.send) throw new Error('this bench process must be started by bench/run.ts (no IPC channel)');
  process.on('message', (m: { id?: number; cmd?: string; args?: unknown }) => {
    if (typeof m !== 'object' || m === null || typeof m.id !== 'number' || typeof m.cmd !== 'string') return;
    const h = handlers[m.cmd];
    const reply = (msg: Record<string, unknown>) => {
      if (process.connected) process.send!({ id: m.id, ...msg });
    };
    if (!h) {
      reply({ ok: false, error: `unknown command ${m.cmd}` });
      return;
    }
    Promise.resolve()
      .then(() => h(m.args))
      .then(
        (result) => reply({ ok: true, result }),
        (err) => reply({ ok: false, error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) }),
      );
  });
  process.on('disconnect', () => {
    try {
      onExit?.();
    } finally {
      process.exit(0);
    }
  });
}

export function emit(ev: string, data: unknown): void {
  if (process.connected) process.send!({ ev, data });
}

/** Monotonic clock shared by every process on the machine (CLOCK_MONOTONIC), in microseconds. */
export const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);
