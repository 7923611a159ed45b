import { defineConfig } from 'vitest/config';
import { findPostgresBinDir } from './test/harness/postgres-server.js';

// Test files run two at a time, each against its own database cloned from a migrated template
// (test/harness/file-database.ts). Embedded PGlite has one database and serves every connection
// through one session, where statements of two processes can interleave, so when the tests fall
// back to it, files share that database and run one after another.
const sharedPglite = process.env.TEST_DATABASE_KIND === 'pglite' || (!process.env.TEST_DATABASE_URL && !findPostgresBinDir());

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    setupFiles: ['./test/harness/file-database.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: !sharedPglite,
  },
});
