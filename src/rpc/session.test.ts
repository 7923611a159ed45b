// SessionService (./session.ts) through an in-memory Connect router behind the real
// authentication interceptor, on this test file's own database: a user caller acts as itself
// whatever the body's `caller` says, a system caller acts for the user it names, another
// user's session does not exist for them, and the domain's errors keep their codes.
import { randomUUID } from 'node:crypto';
import { Code, createClient, createRouterTransport } from '@connectrpc/connect';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SessionService } from '../gen/svc/v1/session_pb.js';
import { SYSTEM_CALLER, callAs, createLogger } from '../kernel/index.js';
import { sessionRegistry } from '../sessions/index.js';
import { connectSql } from '../store/index.js';
import { TaskStore } from '../tasks/index.js';
import { clientAuthInterceptor, serverAuthInterceptor } from './auth.js';
import { createSessionService } from './session.js';
import { rpcFailure } from '../../test/helpers/connect.js';

const TOKEN = 'unit-test-internal-token-0123456789abcdef';
const sql = connectSql(inject('pgUrl'), { max: inject('pgKind') === 'pglite' ? 1 : 2 });
const tasks = new TaskStore(sql, sessionRegistry(sql));
afterAll(async () => {
  await tasks.close();
  await sql.end();
});

const client = createClient(
  SessionService,
  createRouterTransport((r) => r.service(SessionService, createSessionService({ sql, tasks, log: createLogger({ level: 'silent' }) })), {
    router: { interceptors: [serverAuthInterceptor(TOKEN)] },
    transport: { interceptors: [clientAuthInterceptor(TOKEN)] },
  }),
);

const newUser = () => ({ userId: randomUUID(), tenantId: randomUUID() });
const as = (u: { userId: string; tenantId: string }) => callAs({ kind: 'user', ...u });

describe('SessionService callers', () => {
  it("a user's session is theirs: another user, of another tenant or not, is told it does not exist", async () => {
    const alice = newUser();
    const { session } = await client.createSession({ title: 'mine' }, as(alice));
    expect(session).toMatchObject({ title: 'mine', userId: alice.userId, taskCount: 0 });
    expect((await client.getSession({ sessionId: session!.id }, as(alice))).session?.id).toBe(session!.id);
    for (const other of [newUser(), { userId: randomUUID(), tenantId: alice.tenantId }]) {
      expect(await rpcFailure(client.getSession({ sessionId: session!.id }, as(other)))).toEqual({ code: Code.NotFound, message: 'Session not found' });
      // Deleting is idempotent: another user's delete answers as for a missing session and
      // leaves this one alone.
      expect((await client.deleteSession({ sessionId: session!.id }, as(other))).success).toBe(true);
      expect((await client.listSessions({}, as(other))).totalCount).toBe(0);
    }
    expect((await client.getSession({ sessionId: session!.id }, as(alice))).session?.title).toBe('mine');
    expect((await client.listSessions({}, as(alice))).sessions.map((s) => s.id)).toEqual([session!.id]);
  });

  it("a user caller acts as itself whatever the body's caller names; a system caller acts for the user it names", async () => {
    const mallory = newUser();
    const victim = newUser();
    const { session } = await client.createSession({ title: 'spoof', caller: victim }, as(mallory));
    expect(session?.userId).toBe(mallory.userId);
    expect((await client.listSessions({}, as(victim))).totalCount).toBe(0);
    expect((await rpcFailure(client.getSession({ sessionId: session!.id, caller: mallory }, as(victim)))).code).toBe(Code.NotFound);

    const { session: forVictim } = await client.createSession({ title: 'scheduled', caller: victim }, callAs(SYSTEM_CALLER));
    expect(forVictim?.userId).toBe(victim.userId);
    expect((await client.getSession({ sessionId: forVictim!.id }, as(victim))).session?.title).toBe('scheduled');
  });

  it("the domain's errors keep their codes and messages", async () => {
    const u = newUser();
    expect(await rpcFailure(client.createSession({ externalId: randomUUID() }, as(u)))).toEqual({
      code: Code.InvalidArgument,
      message: 'external_id must be at most 255 characters and not a UUID',
    });
    const ext = `chat-${randomUUID().slice(0, 8)}`;
    await client.createSession({ externalId: ext }, as(u));
    expect(await rpcFailure(client.createSession({ externalId: ext }, as(u)))).toEqual({
      code: Code.AlreadyExists,
      message: 'a session with this external_id already exists',
    });
    expect((await rpcFailure(client.updateSession({ sessionId: ext, title: '' }, as(u)))).code).toBe(Code.InvalidArgument);
    expect((await rpcFailure(client.getSession({ sessionId: randomUUID() }, as(u)))).code).toBe(Code.NotFound);
  });

  it('refuses a call without an authenticated caller', async () => {
    expect((await rpcFailure(client.listSessions({}))).code).toBe(Code.Unauthenticated);
  });
});
