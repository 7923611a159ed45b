/**
 * The gateway's daemon connections and chat channels: claims arbitrated through NATS KV (any
 * gateway); inbound channel messages go to their owners' daemons, or to the default agent
 * route when none claims them in time; replies and results are posted back through the outbox.
 */
import { create } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { ChannelAgentRoute, ChannelOutbox, ChannelRouter, ChannelStore, channelKeyOf } from '../../channels/index.js';
import { ClaimBoard, DaemonHub } from '../../daemon/index.js';
import { OrchestratorService, SubmitTaskRequestSchema } from '../../gen/svc/v1/orchestrator_pb.js';
import { SYSTEM_CALLER } from '../../kernel/index.js';
import { transportAs } from '../../rpc/index.js';
import { Teardown } from '../teardown.js';
import type { AppContext } from '../types.js';

export async function startChannels(ctx: AppContext): Promise<{ daemon: DaemonHub; stop(): Promise<void> }> {
  const { cfg, log, bus, store } = ctx;
  const teardown = new Teardown(log);
  try {
    const board = await ClaimBoard.open(bus.nc, { ttlSeconds: cfg.daemon.claimTtlSeconds, replicas: cfg.nats.replicas });
    const outbox = new ChannelOutbox(bus, new ChannelStore(ctx.sql, channelKeyOf(cfg.channels.secretKey, cfg.channels.dataDir)), cfg.channels, log);
    await outbox.start();
    teardown.push(() => outbox.stop());
    // The channel's owner is named by this system caller (as the scheduler does).
    const orchestrator = createClient(OrchestratorService, transportAs(ctx.orchestratorTransport(), SYSTEM_CALLER));
    const agentRoute = await ChannelAgentRoute.start({
      bus,
      outbox,
      log,
      tasks: (ids) => store.getTasks(ids),
      submit: async (r) => {
        const res = await orchestrator.submitTask(
          create(SubmitTaskRequestSchema, {
            metadata: { userId: r.userId ?? '', tenantId: r.tenantId ?? '', sessionId: r.sessionId, labels: r.labels },
            query: r.query,
            options: r.skill ? { skill: r.skill } : {},
          }),
          { timeoutMs: 15_000 },
        );
        return res.workflowId;
      },
    });
    teardown.push(() => agentRoute.stop());
    // The hub's hooks reach the router, which needs the hub: bound once both exist.
    const late: { router?: ChannelRouter } = {};
    const daemon = await DaemonHub.start(
      bus.nc,
      board,
      {
        claimTtlSeconds: cfg.daemon.claimTtlSeconds,
        pendingTtlSeconds: cfg.daemon.pendingTtlSeconds,
        deliverReply: (r) => late.router!.deliverReply(r),
        unclaimed: (m, owner) => late.router!.toAgent(m, owner),
      },
      log,
    );
    teardown.push(() => daemon.stop());
    const router = new ChannelRouter(bus, daemon, agentRoute, outbox, log);
    late.router = router;
    await router.start();
    teardown.push(() => router.stop());
    return { daemon, stop: () => teardown.run() };
  } catch (err) {
    await teardown.run();
    throw err;
  }
}
