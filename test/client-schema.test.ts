/**
 * The API client's generated types stay in step with the routes: regenerating them from
 * `buildOpenApi` gives exactly the checked-in src/client/schema.gen.ts (a route change that was
 * not regenerated fails here, saying to run `npm run gen:client`), and the document the gateway
 * serves at /openapi.json is `buildOpenApi`'s (apart from the version it carries).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GEN_COMMAND, SCHEMA_FILE, renderSchema } from '../scripts/gen-client.js';
import { buildOpenApi } from '../src/gateway/openapi.js';
import { json, startTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.stop();
});

it('src/client/schema.gen.ts is what the current routes generate', async () => {
  const expected = await renderSchema();
  const actual = readFileSync(SCHEMA_FILE, 'utf8');
  if (actual !== expected) {
    const a = actual.split('\n');
    const e = expected.split('\n');
    const at = e.findIndex((line, i) => line !== a[i]);
    expect.fail(
      `src/client/schema.gen.ts is out of date with the gateway's routes: run \`${GEN_COMMAND}\` and commit the result ` +
        `(first difference at line ${at + 1}: generated ${JSON.stringify(e[at])}, checked in ${JSON.stringify(a[at])})`,
    );
  }
  // Every path of the document has its types.
  const doc = buildOpenApi('0.0.0');
  for (const p of Object.keys(doc.paths)) expect(actual, p).toContain(`'${p}': {`);
});

it('the served /openapi.json is the document buildOpenApi builds', async () => {
  const res = await fetch(`${t.base}/openapi.json`);
  expect(res.status).toBe(200);
  const served = await json(res);
  expect(typeof served.info.version).toBe('string');
  expect(served).toEqual(JSON.parse(JSON.stringify(buildOpenApi(served.info.version))));
});
