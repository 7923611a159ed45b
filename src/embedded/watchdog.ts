/**
 * A child that must not die with its parent's process group (it is started detached, so that
 * the group's SIGTERM or Ctrl-C reaches the service alone and the child stops after the
 * service has drained) must still never outlive the service. The parent stops it on an orderly
 * exit; this watchdog covers every other exit, kill -9 included: a tiny `sh` in a group of its
 * own, deaf to the group signals, reads a pipe whose only writer is this process. When this
 * process ends, however it ends, the kernel closes the pipe, the read returns, and the watchdog
 * stops the child: SIGTERM, then SIGKILL after the grace period. Before each signal it checks
 * that the pid still names the same program and arguments, so a reused pid is never hit.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const SCRIPT = `
trap '' INT TERM HUP QUIT
pid=$1; want=$2; grace=$3
while read -r _; do :; done
same() { [ "$(tr '\\0' ' ' < /proc/$pid/cmdline 2>/dev/null)" = "$want" ]; }
same || exit 0
kill -TERM "$pid" 2>/dev/null
i=0
while [ "$i" -lt "$grace" ] && same; do sleep 0.1; i=$((i+1)); done
same && kill -KILL "$pid" 2>/dev/null
exit 0
`;

export interface Watchdog {
  /**
   * The parent stopped the child itself: the watchdog has nothing left to do. Settles once
   * the watchdog has exited, so that nothing started for the child is left after it.
   */
  dismiss(): Promise<void>;
}

/**
 * Watches `child` (spawned by this process with `argv`, its program and arguments) on behalf
 * of this process; `graceMs` is how long SIGTERM gets before SIGKILL.
 */
export function watchOverChild(child: ChildProcess, argv: string[], graceMs: number): Watchdog {
  // /proc/<pid>/cmdline: every argument followed by a NUL, which the script turns into spaces.
  const want = argv.map((a) => `${a} `).join('');
  const dog = spawn('/bin/sh', ['-c', SCRIPT, 'taskorch-watchdog', String(child.pid), want, String(Math.ceil(graceMs / 100))], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // No /bin/sh ('error', no 'exit'): the parent's own stop() still runs on an orderly exit.
  const dogExited = new Promise<void>((done) => {
    dog.once('exit', () => done());
    dog.once('error', () => done());
  });
  // Neither the watchdog nor its pipe keeps this process alive.
  dog.unref();
  dog.stdin?.on('error', () => {});
  (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  let dismissed: Promise<void> | undefined;
  return {
    dismiss() {
      dismissed ??= (() => {
        if (dog.pid === undefined || dog.exitCode !== null || dog.signalCode !== null) return Promise.resolve();
        dog.ref(); // its exit is awaited now, even by a process with nothing else to do
        dog.kill('SIGKILL');
        return dogExited;
      })();
      return dismissed;
    },
  };
}
