import { describe, expect, it } from 'vitest';
import { natsDurability } from './nats-durability.js';

describe('natsDurability', () => {
  it('names the version and what an ack means for each setting', () => {
    expect(natsDurability({ version: '2.10.27', embedded: true, syncInterval: 'always', replicas: 1 })).toBe(
      'nats-server 2.10.27, R1: an ack means fsynced to disk (sync_interval always)',
    );
    expect(natsDurability({ version: '2.9.10', embedded: true, replicas: 1 })).toMatch(
      /^nats-server 2\.9\.10, R1: .*not a power loss.*needs nats-server 2\.10/,
    );
    expect(natsDurability({ version: '2.10.27', embedded: true, syncInterval: '10s', replicas: 1 })).toMatch(/fsync every 10s/);
    expect(natsDurability({ version: '2.10.27', embedded: false, replicas: 1 })).toMatch(/written on one server/);
    expect(natsDurability({ version: '2.10.27', embedded: false, replicas: 3 })).toBe(
      "nats-server 2.10.27, R3: an ack means stored by a majority of 3 servers (survives the loss of 1; fsync per each server's sync_interval)",
    );
    expect(natsDurability({ version: undefined, embedded: false, replicas: 5 })).toMatch(/^nats-server \(version unknown\), R5: .*survives the loss of 2/);
  });
});
