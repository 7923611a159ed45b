/**
 * A message that was pending once and has left (replied, or routed elsewhere) is not offered
 * again when its inbound message is redelivered: the fault drill saw a gateway killed while
 * routing a message, the message granted and answered, then the inbound message redelivered
 * and the message granted a second time. On a real nats-server.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNats, type TestNats } from '../../test/harness/nats.js';
import { connectTestBus } from '../../test/harness/bus.js';
import type { Bus } from '../bus/index.js';
import { Dispatcher } from './dispatch.js';
import { PendingStore } from './pending.js';
import type { DaemonMessage, Owner } from './protocol.js';

let nats: TestNats;
let bus: Bus;
beforeAll(async () => {
  nats = await startTestNats();
  bus = await connectTestBus(nats.url, 'pending-left');
});
afterAll(async () => {
  await bus?.close();
  await nats?.stop();
});

const owner: Owner = { tenantId: randomUUID(), userId: randomUUID() };
const message = (): DaemonMessage => ({ message_id: randomUUID(), thread_id: 't1', text: 'hello' }) as unknown as DaemonMessage;

describe('pending messages that have left', () => {
  it('a redelivered message is not offered again once it was replied; a pending one keeps its state', async () => {
    const pending = await PendingStore.open(bus.nc, bus.js, bus.jsm);
    const dispatcher = new Dispatcher(bus.nc, pending);
    try {
      const m = message();
      await dispatcher.dispatch(m, owner);
      const first = await pending.get(m.message_id);
      expect(first?.p.msg.message_id).toBe(m.message_id);

      // Redelivered while pending: the entry stands as it was.
      await dispatcher.dispatch(m, owner);
      expect((await pending.get(m.message_id))?.revision).toBe(first!.revision);

      // Replied: the entry leaves; a redelivery now finds it left and offers nothing.
      await pending.delete(m.message_id);
      expect(await pending.known(m.message_id)).toBe(true);
      await dispatcher.dispatch(m, owner);
      expect(await pending.get(m.message_id)).toBeUndefined();

      // A message never seen is stored as before.
      const other = message();
      expect(await pending.known(other.message_id)).toBe(false);
      await dispatcher.dispatch(other, owner);
      expect((await pending.get(other.message_id))?.p.msg.message_id).toBe(other.message_id);
    } finally {
      dispatcher.stop();
    }
  });
});
