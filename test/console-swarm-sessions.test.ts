/**
 * The console's swarm view and sessions pages in headless Chromium (as test/console.test.ts),
 * against the real service with a scripted model (test/helpers/openai-server.ts, the swarm
 * script of test/helpers/swarm.ts). A swarm's page, reached from its live view, lists its
 * agents, its task list and its messages as they stream; a message sent to the lead becomes a
 * task with an agent of its own; once the swarm is over the service's refusal is shown. A
 * session's page lists its turns, renames it, downloads its workspace files (fetched with the
 * credentials, saved from a Blob: the content checked) and deletes it. axe-core on every page
 * (light; phone width 375 x 740 in dark mode): no serious or critical violation, and no
 * horizontal scrolling at phone width.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../src/client/index.js';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { apiClient, runTask, startTestApp, type TestApp } from './helpers/app.js';
import { expectAccessible, launchBrowser, onPage, signInWithKey } from './helpers/browser.js';
import { scriptedProvider, startOpenAiServer, type OpenAiTestServer } from './helpers/openai-server.js';
import { finished, submitSwarm, swarmConfig, swarmModel, text, toolCall } from './helpers/swarm.js';
import { registerUser, type TestUser } from './helpers/users.js';

let t: TestApp;
let llm: OpenAiTestServer;
let user: TestUser;
let browser: Browser;
let root: string | undefined;

const PHONE_DARK = { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, colorScheme: 'dark' as const };

beforeAll(async () => {
  await buildConsole({ typecheck: false });
  llm = await startOpenAiServer();
  root = await mkdtemp(join(tmpdir(), 'console-ss-ws-'));
  t = await startTestApp(
    {
      GATEWAY_SKIP_AUTH: '0',
      // Agent-2 of the swarm below iterates until the test lets it finish.
      CONFIG_PATH: swarmConfig({ max_agents: 4, max_iterations_per_agent: 60 }),
      MAX_TOKENS_PER_REQUEST: '0',
      MAX_COST_PER_REQUEST: '0',
      WORKSPACE_ROOT: root,
      RATE_LIMIT_REQUESTS: '100000',
      RATE_LIMIT_TASK_LIST_BURST: '100000',
    },
    { llm: scriptedProvider(llm, 30_000) },
  );
  user = await registerUser(t.base, 'console-ss');
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await llm?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The page is no wider than the viewport (only .table-wrap boxes may scroll sideways). */
async function expectNoSideScroll(page: Page): Promise<void> {
  const { scroll, width } = await page.evaluate(() => {
    const d = (globalThis as any).document.documentElement; // the page's (the test has no DOM types)
    return { scroll: d.scrollWidth as number, width: d.clientWidth as number };
  });
  expect(scroll).toBeLessThanOrEqual(width);
}

describe('swarm view', () => {
  it('lists agents, tasks and messages live; a message to the lead becomes a task; once over, the refusal is shown (phone, dark)', async () => {
    let release = false;
    llm.setDefault(
      swarmModel({
        plan: ['Survey the Rhine', 'Survey the Danube'],
        // agent-2 keeps working (a calculator call every 500 ms) until released: the swarm runs while the page messages its lead.
        agent: (a, turn) =>
          a === 'agent-2' && !release && turn < 55 ? toolCall(`calc-${turn}`, 'calculator', { expression: '1+1' }, { delayMs: 500 }) : text(`${a} result`),
      }),
    );
    const id = await submitSwarm(t.base, 'Survey two rivers.', user.h);
    try {
      await onPage(
        browser,
        'swarm',
        async (page) => {
          await signInWithKey(page, t.base, user.h['X-API-Key']);
          await page.goto(`${t.base}/#/live/${id}`);
          await page.getByTestId('swarm-link').getByRole('link', { name: 'open the swarm view' }).click();
          await page.getByRole('heading', { name: 'Swarm', level: 1 }).waitFor();
          expect(await page.getByRole('link', { name: 'live view' }).getAttribute('href')).toBe(`#/live/${id}`);
          expect(await page.getByRole('link', { name: 'details and raw events' }).getAttribute('href')).toBe(`#/tasks/${id}`);

          const agents = page.getByTestId('swarm-agents');
          const tasks = page.getByTestId('swarm-tasks');
          const messages = page.getByTestId('swarm-messages');
          await agents.locator('tr[data-agent="swarm-lead"]').waitFor();
          await expect.poll(() => agents.locator('tr[data-agent="agent-1"]').innerText(), { timeout: 20_000 }).toMatch(/Survey the Rhine[\s\S]*done/);
          await expect.poll(() => agents.locator('tr[data-agent="agent-2"]').innerText()).toMatch(/Survey the Danube[\s\S]*running/);
          await expect.poll(() => tasks.locator('tbody tr').count()).toBe(2);
          await expect.poll(() => tasks.innerText()).toMatch(/Survey the Danube[\s\S]*assigned[\s\S]*agent-2/);
          await expect.poll(() => messages.innerText()).toMatch(/Lead[\s\S]*Planned 2 tasks/);
          await messages.getByText('Recruit agent-1, agent-2').waitFor();
          expect(await page.getByTestId('swarm-status').innerText()).toBe('RUNNING');
          await expectAccessible(page, 'swarm view (phone, dark)');
          await expectNoSideScroll(page);

          // A message to the lead: delivered, acted on (a new task with an agent of its own).
          await page.getByLabel('Message to the lead').fill('Also survey the Elbe');
          await page.getByRole('button', { name: 'Send to the lead' }).click();
          await expect.poll(() => page.getByTestId('swarm-send-notice').innerText()).toContain('Message delivered');
          expect(await page.getByTestId('swarm-send-error').innerText()).toBe('');
          await expect.poll(() => tasks.innerText(), { timeout: 20_000 }).toMatch(/Also survey the Elbe[\s\S]*agent-3/);
          await expect.poll(() => messages.innerText()).toMatch(/You[\s\S]*Lead[\s\S]*Also survey the Elbe[\s\S]*A person's message: added/);
          await expect.poll(() => page.getByTestId('swarm-pending').count()).toBe(0);
          await expect.poll(() => agents.locator('tr[data-agent="agent-3"]').innerText(), { timeout: 20_000 }).toMatch(/Also survey the Elbe[\s\S]*done/);

          // The swarm finishes; a message now is refused, with the service's own words.
          release = true;
          await expect.poll(() => page.getByTestId('swarm-status').innerText(), { timeout: 30_000 }).toBe('COMPLETED');
          await expect.poll(() => agents.locator('tr[data-agent="agent-2"]').innerText()).toMatch(/done/);
          await expect.poll(() => agents.locator('tr[data-agent="swarm-lead"]').innerText()).toMatch(/completed/);
          await page.getByLabel('Message to the lead').fill('One more thing');
          await page.getByRole('button', { name: 'Send to the lead' }).click();
          await expect.poll(() => page.getByTestId('swarm-send-error').innerText()).toBe('Swarm not found');
          await expectAccessible(page, 'swarm view, ended (phone, dark)');
          await expectNoSideScroll(page);
        },
        PHONE_DARK,
      );
    } finally {
      release = true;
    }
    const s = await finished(t.base, id, user.h);
    expect(s.status, s.error).toBe('TASK_STATUS_COMPLETED');
    expect(s.metadata).toMatchObject({ workflow_type: 'swarm', total_agents: 3 });
  }, 90_000);
  it('after a REPLAY_GAP reads what the stream no longer holds from the stored events', async () => {
    const id = randomUUID();
    const at = new Date().toISOString();
    const ev = (seq: number, type: string, agent_id: string) => ({
      workflow_id: id,
      seq,
      stream_id: `1-${seq}`,
      type,
      agent_id,
      message: '',
      timestamp: at,
      payload: {},
    });
    // The service's answers, stood in for: a gap needs an event window smaller than a swarm.
    const stored = [
      ev(1, 'WORKFLOW_STARTED', 'swarm-supervisor'),
      ev(2, 'AGENT_STARTED', 'agent-1'),
      ev(3, 'AGENT_STARTED', 'agent-2'),
      ev(4, 'AGENT_STARTED', 'agent-3'),
    ];
    const asked: number[] = [];
    await onPage(browser, 'swarm-replay-gap', async (page) => {
      await page.route(`**/api/v1/tasks/${id}`, (route) =>
        route.fulfill({
          json: {
            task_id: id,
            status: 'TASK_STATUS_RUNNING',
            query: 'q',
            session_id: 's',
            mode: 'EXECUTION_MODE_COMPLEX',
            created_at: at,
            usage: {},
            metadata: {},
          },
        }),
      );
      await page.route(`**/api/v1/tasks/${id}/events?**`, (route) => {
        const after = Number(new URL(route.request().url()).searchParams.get('after_seq'));
        asked.push(after);
        // First read: only the first two are stored yet; the rest by the time of the gap.
        void route.fulfill({ json: { workflow_id: id, events: stored.filter((e) => e.seq > after && (asked.length > 1 || e.seq <= 2)) } });
      });
      await page.route('**/api/v1/stream/sse?**', (route) => {
        const frame = (e: ReturnType<typeof ev>) => `id: ${e.stream_id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
        const gap = { type: 'REPLAY_GAP', message: 'gap', requested_after: 2, first_available_seq: 5, timestamp: at };
        void route.fulfill({
          headers: { 'content-type': 'text/event-stream' },
          body: `event: REPLAY_GAP\ndata: ${JSON.stringify(gap)}\n\n${frame(ev(5, 'AGENT_STARTED', 'agent-4'))}${frame(ev(6, 'STREAM_END', 'orchestrator'))}event: done\ndata: [DONE]\n\n`,
        });
      });
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      await page.goto(`${t.base}/#/swarm/${id}`);
      const agents = page.getByTestId('swarm-agents');
      for (const a of ['agent-1', 'agent-2', 'agent-3', 'agent-4']) await expect.poll(() => agents.innerText()).toContain(a);
      expect(asked).toEqual([0, 2]);
    });
  }, 60_000);
});

describe('sessions', () => {
  it('lists the sessions; one session shows its turns, takes a new title, downloads its files, is deleted', async () => {
    llm.reset();
    const name = `console-ss-${randomUUID()}`;
    await runTask(t.base, user.h, { query: 'What is the longest river in Europe?', session_id: name });
    await runTask(t.base, user.h, { query: 'And the second longest?', session_id: name });
    const api = apiClient(t.base, user.h);
    const session = ok(await api.GET('/api/v1/sessions/{sessionId}', { params: { path: { sessionId: name } } }));
    // Files as an agent would leave them in the session's workspace (<WORKSPACE_ROOT>/<session UUID>).
    const dir = join(root!, session.id);
    await mkdir(join(dir, 'notes'), { recursive: true });
    const report = 'Rivers of Europe\nVolga: 3,530 km\nDanube: 2,850 km\n';
    await writeFile(join(dir, 'report.txt'), report);
    await writeFile(join(dir, 'notes', 'summary.md'), '# Summary\n\nThe Volga is the longest.\n');

    await onPage(
      browser,
      'sessions',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']);
        await page.getByRole('link', { name: 'Sessions', exact: true }).click();
        await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
        const row = page.locator(`tr[data-session="${session.id}"]`);
        await expect.poll(() => row.innerText()).toContain('And the second longest?');
        expect(await row.locator('td').nth(1).innerText()).toBe('2');
        await expectAccessible(page, 'session list');

        await row.getByRole('link').click();
        await page.getByRole('heading', { name: 'Session', level: 1 }).waitFor();
        const turns = page.getByRole('list', { name: 'Turns' });
        await expect.poll(() => turns.locator(':scope > li').count()).toBe(2);
        await turns.getByRole('heading', { name: /Turn 1/ }).waitFor();
        expect(await turns.locator(':scope > li').first().innerText()).toContain('What is the longest river in Europe?');
        expect(await turns.locator(':scope > li').nth(1).innerText()).toMatch(/Turn 2[\s\S]*COMPLETED[\s\S]*And the second longest\?/);
        await expectAccessible(page, 'session');

        // A new title, saved with PATCH.
        await page.getByLabel('Title').fill('European rivers');
        await page.getByRole('button', { name: 'Save title' }).click();
        await page.getByText('Title saved.').waitFor();
        expect(ok(await api.GET('/api/v1/sessions/{sessionId}', { params: { path: { sessionId: name } } })).title).toBe('European rivers');

        // Downloads: fetched with the API key, saved from a Blob under the file's name.
        const files = page.getByTestId('session-files');
        await files.locator('tr[data-path="/report.txt"]').waitFor();
        const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download /report.txt' }).click()]);
        expect(dl.suggestedFilename()).toBe('report.txt');
        expect(await readFile((await dl.path())!, 'utf8')).toBe(report);
        const [md] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download /notes/summary.md' }).click()]);
        expect(md.suggestedFilename()).toBe('summary.md');
        expect(await readFile((await md.path())!, 'utf8')).toContain('The Volga is the longest.');

        // Phone width, dark.
        await page.setViewportSize({ width: 375, height: 740 });
        await page.emulateMedia({ colorScheme: 'dark' });
        await expectAccessible(page, 'session (phone, dark)');
        await expectNoSideScroll(page);

        await page.getByRole('button', { name: 'Delete session' }).click();
        await page.getByRole('button', { name: 'Delete permanently' }).click();
        await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
        await expect.poll(() => page.locator(`tr[data-session="${session.id}"]`).count()).toBe(0);
        await expectAccessible(page, 'session list (phone, dark)');
        await expectNoSideScroll(page);
      },
      { acceptDownloads: true },
    );
    const gone = await api.GET('/api/v1/sessions/{sessionId}', { params: { path: { sessionId: name } } });
    expect(gone.response.status).toBe(404);
  }, 60_000);
});
