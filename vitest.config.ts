import { defineConfig } from 'vitest/config';
import { findPostgresBinDir } from './test/harness/postgres-server.js';

// Test files run two at a time against one shared database. Embedded PGlite serves every
// connection through one session, and statements of two processes can interleave there, so
// when the tests fall back to it, files run one after another.
const sharedPglite = process.env.TEST_DATABASE_KIND === 'pglite' || (!process.env.TEST_DATABASE_URL && !findPostgresBinDir());

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: !sharedPglite,
  },
});
