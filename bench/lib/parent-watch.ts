/**
 * Preloaded into the service process by the bench runner (`--import ./bench/lib/parent-watch.ts`):
 * if the runner dies without stopping it, the service gets SIGTERM (its own clean shutdown).
 * One unref'd timer per second; no other effect.
 */
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid !== parent) {
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
    setTimeout(() => process.exit(1), 15_000).unref();
  }
}, 1000);
timer.unref();
