/** Role archiver: copies events from JetStream into Postgres (a shared durable consumer). */
import { Archiver } from '../../runtime/index.js';
import type { AppContext, RoleStop } from '../types.js';

export async function startArchiverRole(ctx: AppContext): Promise<RoleStop> {
  const archiver = new Archiver(ctx.bus, ctx.store, ctx.log);
  await archiver.start();
  return () => archiver.stop();
}
