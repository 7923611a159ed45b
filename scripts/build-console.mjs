#!/usr/bin/env node
// Builds the browser console (src/console, Preact) into dist/console/: app.js (one minified ES
// module bundle: the console, the API client of src/client, preact, marked, dompurify), app.css
// and index.html naming both with a content hash (?v=...), so the gateway can let browsers
// cache them for good; app.js.gz and app.css.gz beside them, served to browsers that accept
// gzip. Everything is local: no CDN, it works offline.
//
//   node scripts/build-console.mjs              type-checks src/console, then bundles
//   import { buildConsole } from './build-console.mjs'; await buildConsole({ typecheck: false })
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src', 'console');

/** The hash of a file's content, as named in index.html. */
const hashOf = (text) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/**
 * Bundles the console into `outDir` (default dist/console) and answers the files' sizes
 * ({ js, css, jsGzip, cssGzip } in bytes). `typecheck` first runs tsc on src/console/tsconfig.json.
 */
export async function buildConsole({ outDir = join(root, 'dist', 'console'), typecheck = true } = {}) {
  if (typecheck) {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', join(src, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('src/console does not type-check (see above)');
  }
  const result = await build({
    entryPoints: { app: join(src, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: join(src, 'tsconfig.json'),
    legalComments: 'none',
    write: false,
    outdir: outDir,
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js')).text;
  const css = (await build({ entryPoints: [join(src, 'app.css')], bundle: true, minify: true, write: false, outdir: outDir, logLevel: 'warning' }))
    .outputFiles[0].text;
  const html = readFileSync(join(src, 'index.html'), 'utf8').replace('__JS_HASH__', hashOf(js)).replace('__CSS_HASH__', hashOf(css));
  mkdirSync(outDir, { recursive: true });
  // Each file written whole under another name, then renamed: a gateway serving the folder (or a
  // second build at the same moment, as two test files may run) never reads half a file.
  // The assets also gzipped (app.js.gz, app.css.gz), for browsers that accept it; index.html
  // last, so it never names an asset not written yet.
  for (const [name, text] of [
    ['app.js', js],
    ['app.js.gz', gzipSync(js, { level: 9 })],
    ['app.css', css],
    ['app.css.gz', gzipSync(css, { level: 9 })],
    ['index.html', html],
  ]) {
    const part = join(outDir, `.${name}.${process.pid}.part`);
    writeFileSync(part, text);
    renameSync(part, join(outDir, name));
  }
  return { js: Buffer.byteLength(js), css: Buffer.byteLength(css), jsGzip: gzipSync(js).length, cssGzip: gzipSync(css).length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const s = await buildConsole();
  console.log(`built dist/console/: app.js ${(s.jsGzip / 1024).toFixed(1)} KB gzipped, app.css ${(s.cssGzip / 1024).toFixed(1)} KB gzipped`);
}
