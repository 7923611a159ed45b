/** A nats-server with JetStream for tests, storing in a temp dir that `stop()` removes. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNatsServer, type NatsServerHandle } from '../../src/embedded/nats-server.js'

export async function startTestNats(opts: { port?: number } = {}): Promise<NatsServerHandle> {
  const storeDir = await mkdtemp(join(tmpdir(), 'nats-test-'))
  let server: NatsServerHandle
  try {
    server = await startNatsServer({ storeDir, port: opts.port })
  } catch (err) {
    await rm(storeDir, { recursive: true, force: true })
    throw err
  }
  let stopping: Promise<void> | undefined
  return {
    ...server,
    stop: () =>
      (stopping ??= (async () => {
        await server.stop()
        await rm(storeDir, { recursive: true, force: true })
      })()),
  }
}
