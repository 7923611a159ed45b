/**
 * Preloaded into a process under measurement (`node --import`): writes its own memory figures
 * (process.memoryUsage: rss, heap, external, array buffers) as JSON to MEM_REPORT_FILE every
 * 500 ms, so the rss benchmark can split RSS by component without touching the service.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.MEM_REPORT_FILE;
if (file) {
  setInterval(() => {
    try {
      writeFileSync(file, JSON.stringify(process.memoryUsage()));
    } catch {
      /* the benchmark removed its folder: nothing to report to */
    }
  }, 500).unref();
}
