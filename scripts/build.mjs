#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ (tsconfig.build.json, tests and the console excluded),
// bundles the browser console (src/console) into dist/console/ (scripts/build-console.mjs) and copies the
// files the compiled code reads at run time (SQL migrations, found beside store/index.js; the
// python_executor's and the calculator's workers, plain JavaScript started from beside
// tools/python.js and tools/calculator.js).
// package.json (the version) and config/ are read from the package root, one level above
// dist/ as above src/, so both `node dist/main.js` and `node --import tsx src/main.ts` work.
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildConsole } from './build-console.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (p) => fileURLToPath(new URL(`../${p}`, import.meta.url));

rmSync(at('dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
cpSync(at('src/store/migrations'), at('dist/store/migrations'), { recursive: true });
for (const f of ['python-worker.mjs', 'calculator-worker.mjs', 'calculator-eval.mjs', 'calculator-limits.mjs', 'calculator-decimal.mjs'])
  cpSync(at(`src/tools/${f}`), at(`dist/tools/${f}`));
const size = await buildConsole();
// scripts/build-if-stale.mjs (npm start) compares src/ with this stamp.
writeFileSync(at('dist/.built'), `${new Date().toISOString()}\n`);
console.log('built dist/: node dist/main.js (service), node dist/cli/main.js (CLI, also bin/taskorch.mjs)');
console.log(`built dist/console/ (the console at / of the gateway): ${(size.jsGzip / 1024).toFixed(1)} KB of JavaScript gzipped`);
