/** A nats-server with JetStream for tests, storing in a temp dir that `stop()` removes. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '../../src/embedded/nats-server.js';

export interface TestNats extends NatsServerHandle {
  /**
   * An outage: SIGKILL the server (nothing flushed, nothing said to clients), keep it down
   * for `downMs`, then start it again on the same port and store directory.
   */
  killAndRestart(downMs: number): Promise<void>;
}

export async function startTestNats(opts: { port?: number } = {}): Promise<TestNats> {
  const storeDir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  let server: NatsServerHandle;
  try {
    server = await startNatsServer({ storeDir, port: opts.port });
  } catch (err) {
    await rm(storeDir, { recursive: true, force: true });
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    get pid() {
      return server.pid;
    },
    get exited() {
      return server.exited;
    },
    async killAndRestart(downMs: number) {
      process.kill(server.pid, 'SIGKILL');
      await server.exited;
      await new Promise((r) => setTimeout(r, downMs));
      server = await startNatsServer({ storeDir, port: server.port });
    },
    stop: () =>
      (stopping ??= (async () => {
        await server.stop();
        await rm(storeDir, { recursive: true, force: true });
      })()),
  };
}
