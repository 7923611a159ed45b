/**
 * Reserved settings: variables of the spec's configuration table that nothing implements
 * yet. A process started with some of them set says so in its log, naming each one, and
 * runs as if they were unset (src/config: RESERVED_SETTINGS).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startApp, type App } from '../src/app/index.js';
import { loadConfig } from '../src/config/index.js';
import { startTestNats, type TestNats } from './harness/nats.js';

let nats: TestNats | undefined;
let app: App | undefined;
afterAll(async () => {
  await app?.stop();
  await nats?.stop();
});

describe('reserved settings at start-up', () => {
  it('logs one warning naming each reserved variable that is set, and nothing about the others', async () => {
    nats = await startTestNats();
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    const cfg = loadConfig({
      NATS_URL: nats.url,
      DATABASE_URL: inject('pgUrl'),
      DATABASE_MAX_CONNECTIONS: '1',
      ROLES: 'archiver',
      INTERNAL_RPC_TOKEN: 'test-internal-rpc-token-0123456789abcdefghijklmnop',
      PRIORITY_QUEUES: 'on',
      CONFIG_PATH: './config/features.yaml',
      ENABLE_CACHE: '',
    });
    app = await startApp(cfg, pino({ level: 'warn' }, sink));
    const reserved = lines.filter((l) => / is reserved: /.test(l.msg));
    expect(reserved.map((l) => l.msg).sort()).toEqual(['PRIORITY_QUEUES is reserved: not implemented yet, its value is ignored']);
    expect(reserved.every((l) => l.level === 40)).toBe(true);
  });
});
