/**
 * The rss benchmark's floor: a bare Node process holding only PGlite on a data directory
 * (argv[2]), with the service's shared buffers (argv[3], e.g. 16MB) or PGlite's defaults
 * (argv[3] absent), idle until killed. Prints `ready` once open.
 */
import { PGlite } from '@electric-sql/pglite';

const [dataDir, sharedBuffers] = process.argv.slice(2);
const db = await PGlite.create({
  dataDir,
  ...(sharedBuffers ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] } : {}),
});
await db.query('select 1');
console.log('ready');
setInterval(() => {}, 60_000);
process.on('SIGTERM', async () => {
  await db.close();
  process.exit(0);
});
