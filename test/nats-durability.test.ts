/**
 * The embedded server's fsync policy: NATS_SYNC_INTERVAL reaches the server's jetstream
 * block on nats-server >= 2.10, and is refused with a clear error on an older server (which
 * has no such setting) rather than silently ignored.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findNatsServerBinary, natsServerVersion, startNatsServer, supportsSyncInterval } from '../src/embedded/nats-server.js';

describe('embedded nats-server sync_interval', () => {
  it('is written to the server configuration where supported, and refused where not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nats-sync-'));
    try {
      const version = natsServerVersion(findNatsServerBinary()!);
      expect(version).toBeDefined();
      if (supportsSyncInterval(version)) {
        const srv = await startNatsServer({ storeDir: dir, syncInterval: 'always' });
        await srv.stop();
        expect(await readFile(join(dir, 'nats-server.conf'), 'utf8')).toMatch(/sync_interval: "always"/);
      } else {
        await expect(startNatsServer({ storeDir: dir, syncInterval: 'always' })).rejects.toThrow(/does not support sync_interval \(needs 2\.10/);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
