/**
 * Runs one process from its configuration (centrifugo's app/run.go is the model): open what
 * the roles share, start the enabled roles in order, and on stop() stop them in reverse order
 * within a deadline, then close what they shared (bus, database, embedded servers).
 *
 * The order: the roles that serve others start first (llm, orchestrator), the ones taking work
 * from outside last (gateway), so the gateway stops taking requests first and the worker
 * hands its running workflows back while the bus and database are still there.
 */
import { featureWarnings, type Config, type Role } from '../config/index.js';
import type { Logger } from '../kernel/index.js';
import { openContext } from './context.js';
import { startProcessHealth } from './health-listener.js';
import { startAgentRole } from './roles/agent.js';
import { startArchiverRole } from './roles/archiver.js';
import { startGatewayRole } from './roles/gateway.js';
import { startLlmRole } from './roles/llm.js';
import { startOrchestratorRole } from './roles/orchestrator.js';
import { startSchedulerRole } from './roles/scheduler.js';
import { startWorkerRole } from './roles/worker.js';
import { Teardown } from './teardown.js';
import type { App, AppContext, AppOverrides, RoleStart, RoleStop } from './types.js';

/** Start order; stop runs it backwards. */
const ROLE_ORDER: readonly (readonly [Role, RoleStart])[] = [
  ['llm', startLlmRole],
  ['orchestrator', startOrchestratorRole],
  ['archiver', startArchiverRole],
  ['worker', startWorkerRole],
  ['agent', startAgentRole],
  ['scheduler', startSchedulerRole],
  ['gateway', startGatewayRole],
];

/**
 * How long the roles together get to stop. Past it the remaining roles are still asked to stop,
 * without being waited for, and the shared resources are closed: src/main.ts exits at 20 s
 * whatever happens, and the embedded nats-server needs up to 5 s of that to flush.
 */
const ROLES_STOP_DEADLINE_MS = 12_000;

export async function startApp(cfg: Config, log: Logger, overrides: AppOverrides = {}): Promise<App> {
  // Settings of the spec that nothing implements yet: say so rather than pretend.
  for (const w of featureWarnings(cfg)) log.warn(w);
  const shared = new Teardown(log);
  const running: { role: Role; stop: RoleStop }[] = [];
  let ctx: AppContext | undefined;
  let setStarted: ((started: boolean) => void) | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // From here on an exit of the embedded nats-server is the end of the process, not a crash.
      ctx?.app.embeddedNats?.endSupervision();
      setStarted?.(false);
      const deadline = Date.now() + ROLES_STOP_DEADLINE_MS;
      for (const { role, stop: stopRole } of running.splice(0).reverse()) await stopWithin(role, stopRole, deadline, log);
      await shared.run();
    })());
  try {
    ctx = await openContext(cfg, log, shared, stop, overrides);
    setStarted = await startProcessHealth(ctx, shared);
    for (const [role, start] of ROLE_ORDER) {
      if (cfg.roles.has(role)) running.push({ role, stop: await start(ctx) });
    }
    setStarted(true);
    return ctx.app;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Stops one role, waiting for it at most until `deadline`; a failure is logged, never thrown. */
async function stopWithin(role: Role, stopRole: RoleStop, deadline: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((res) => {
    timer = setTimeout(() => res('late'), Math.max(0, deadline - Date.now()));
  });
  try {
    const how = await Promise.race([stopRole().then(() => 'stopped' as const), late]);
    if (how === 'late') log.error({ role }, 'role did not stop before the shutdown deadline; going on without it');
  } catch (err) {
    log.warn({ err, role }, 'shutdown step failed');
  } finally {
    clearTimeout(timer);
  }
}
