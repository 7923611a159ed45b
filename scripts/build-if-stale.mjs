#!/usr/bin/env node
// `npm start`'s second step: runs `npm run build` (scripts/build.mjs) unless dist/ is newer than
// everything it is built from (src/ with the console's sources in src/console, the tsconfig files,
// package.json, the build scripts), so the service runs as
// compiled JavaScript: no TypeScript compiler in the running process (about 60 MB of RSS and a
// second of start-up less than `node --import tsx src/main.ts`). A start after no change costs
// one walk of src/'s modification times.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.built');

function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const name of readdirSync(path)) m = Math.max(m, newest(join(path, name)));
  return m;
}

let built = 0;
try {
  built = statSync(stamp).mtimeMs;
} catch {
  /* never built */
}
const sources = Math.max(
  newest(join(root, 'src')),
  ...['tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/build.mjs', 'scripts/build-console.mjs'].map((f) => statSync(join(root, f)).mtimeMs),
);
if (sources > built) {
  console.error(built ? 'src/ changed since the last build: building dist/ (npm run build)' : 'building dist/ once (npm run build)');
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
