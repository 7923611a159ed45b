/**
 * Vitest setup file (runs in each test file's worker before the file is loaded): gives the
 * file its own database, cloned from the run's migrated template, and makes
 * `inject('pgUrl')` return it. Every existing `inject('pgUrl')` call, in tests and helpers,
 * thereby reaches the file's own database without a change.
 *
 * On embedded PGlite (a single database, served through one session) global setup makes no
 * template: files keep the shared database and run one after another (see vitest.config.ts).
 * A real server that refuses CREATE DATABASE fails the run in global setup instead.
 */
import { basename } from 'node:path';
import { afterAll, expect, inject } from 'vitest';
import { createDatabaseFromTemplate } from './databases.js';

/**
 * Vitest keeps the values of `project.provide()` in its worker state, which `inject()` reads;
 * there is no public per-file override, so this writes there and fails loudly if the shape
 * ever changes (rather than letting files share a database unnoticed).
 */
function overrideInjected(key: 'pgUrl', value: string): void {
  const state = (globalThis as { __vitest_worker__?: { providedContext?: Record<string, unknown> } }).__vitest_worker__;
  if (!state?.providedContext) throw new Error('per-file database: vitest worker state has no providedContext; update test/harness/file-database.ts');
  state.providedContext[key] = value;
  if (inject(key) !== value) throw new Error('per-file database: inject() does not read the overridden value; update test/harness/file-database.ts');
}

const template = inject('pgTemplate');
if (template) {
  const server = inject('pgServerUrl');
  const file = basename(expect.getState().testPath ?? 'file')
    .replace(/\.test\.ts$/, '')
    .replace(/[^a-z0-9]+/gi, '_')
    .toLowerCase()
    .slice(0, 24);
  // PostgreSQL names are at most 63 bytes: prefix (26) + file (24) + suffix (at most 9), with separators.
  const name = `${inject('pgPrefix')}_${file}_${process.pid.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const db = await createDatabaseFromTemplate(server, template, name);
  overrideInjected('pgUrl', db.url);
  // Setup-file hooks run after the file's own afterAll hooks, so its apps have stopped.
  afterAll(() => db.drop(), 30_000);
}
