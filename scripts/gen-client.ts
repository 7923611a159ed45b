/**
 * `npm run gen:client`: writes src/client/schema.gen.ts, the TypeScript types of the public API,
 * from the document the gateway serves at /openapi.json (`buildOpenApi`, built from the route
 * table), with openapi-typescript's programmatic API, formatted with the project's prettier
 * settings so `npm run lint` accepts it. The file is checked in (tsc sees it without running
 * this); test/client-schema.test.ts fails when a route change was not regenerated.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import * as prettier from 'prettier';
import { buildOpenApi } from '../src/gateway/openapi.js';

/** The command that regenerates the file (named in its header and in the test's failure). */
export const GEN_COMMAND = 'npm run gen:client';
/** Where the types are written. */
export const SCHEMA_FILE = fileURLToPath(new URL('../src/client/schema.gen.ts', import.meta.url));
/** info.version of the document the types are made from: fixed, so a release does not change them. */
const DOC_VERSION = '0.0.0';

const HEADER = `/**
 * The types of the public HTTP API (paths, operations, component schemas), generated from the
 * gateway's OpenAPI document (src/gateway/openapi.ts, served at /openapi.json) by
 * scripts/gen-client.ts with openapi-typescript. Do not edit: run \`${GEN_COMMAND}\`.
 */
`;

/** The text of src/client/schema.gen.ts as the current route table makes it. */
export async function renderSchema(): Promise<string> {
  const doc = buildOpenApi(DOC_VERSION);
  const ast = await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0], { silent: true });
  const source = HEADER + '\n' + astToString(ast);
  const options = (await prettier.resolveConfig(SCHEMA_FILE)) ?? {};
  return prettier.format(source, { ...options, filepath: SCHEMA_FILE });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = await renderSchema();
  await writeFile(SCHEMA_FILE, text);
  process.stdout.write(`wrote src/client/schema.gen.ts (${text.split('\n').length} lines)\n`);
}
