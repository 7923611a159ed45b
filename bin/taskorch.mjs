#!/usr/bin/env node
// The `taskorch` command (package.json "bin"). In a development checkout (src/ present and
// tsx installed) it runs the TypeScript sources, so it never lags behind them; otherwise
// (a production install: `npm ci --omit=dev` and `npm run build`) the JavaScript in dist/.
import { existsSync } from 'node:fs';

const src = new URL('../src/cli/main.ts', import.meta.url);
const dist = new URL('../dist/cli/main.js', import.meta.url);

async function tsxLoader() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}

const tsx = existsSync(src) ? await tsxLoader() : undefined;
if (tsx) {
  tsx.register();
  await import(src.href);
} else if (existsSync(dist)) {
  await import(dist.href);
} else {
  console.error('taskorch: not built: run `npm run build` (or `npm install` in a checkout to run from source)');
  process.exit(1);
}
