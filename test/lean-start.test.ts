/**
 * A lean process (issue 18): the libraries only some tools and routes use (a headless browser
 * driver, a DOM, the MCP SDK and zod, the OpenAPI validator, the model SDK...) are imported by their first use,
 * never by the service's module graph, so a process that never calls them does not hold them.
 * A child process imports the app (everything the service loads at start) with a resolve hook
 * that writes down every module URL, and none of these packages may be among them.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const LAZY_PACKAGES = [
  'playwright-core',
  'linkedom',
  '@modelcontextprotocol/sdk',
  'zod',
  'turndown',
  '@mozilla/readability',
  '@seriousme/openapi-schema-validator',
  '@apidevtools/json-schema-ref-parser',
  'i18n-iso-countries',
  // The model SDK: loaded at the first call of a configured model (never with the offline provider).
  'openai',
];

/** Runs in the loader thread: appends each resolved URL to the file it is given (synchronously, so all are written when the import ends). */
const HOOKS = `
import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(out, r.url + '\\n');
  return r;
}`;

const child = (out: string, entry: string) => `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}), { data: { out: ${JSON.stringify(out)} } });
await import(${JSON.stringify(entry)});`;

describe('the service at start', () => {
  it('imports none of the libraries that are loaded on first use', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lean-start-'));
    try {
      const out = join(dir, 'modules.txt');
      const entry = pathToFileURL(join(process.cwd(), 'src/app/index.ts')).href;
      await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child(out, entry)], { timeout: 60_000 });
      const urls = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
      // The hook saw the app's own files and its eager dependencies.
      expect(urls.some((u) => u.endsWith('/src/app/run.ts'))).toBe(true);
      expect(urls.some((u) => u.includes('/node_modules/@nats-io/'))).toBe(true);
      const loaded = LAZY_PACKAGES.filter((p) => urls.some((u) => u.includes(`/node_modules/${p}/`)));
      expect(loaded).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
