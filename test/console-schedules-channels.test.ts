/**
 * The console's schedules and channels pages in headless Chromium (as test/console.test.ts),
 * against the real service (the scheduler running) and nats-server. Schedules: a schedule made
 * from the form, whose cron preview shows the next runs of the typed expression in the chosen
 * timezone (the first checked against one computed here), a bad expression's error and the
 * service's refusal of a too-short interval shown; paused, resumed and deleted (the confirm
 * step by keyboard), the API agreeing each time; a run fired by the scheduler listed with a link
 * to its task. Channels: one created and listed with its webhook URL (no credential ever on the
 * page), a duplicate's 409 shown, disabled and enabled, deleted; a daemon connected over /v1/ws/messages listed, and gone after it disconnects.
 * axe-core on both pages (no serious or critical violation), at phone width in dark mode too.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
// @ts-expect-error: a plain JavaScript build script without type declarations
import { buildConsole } from '../scripts/build-console.mjs';
import { ok } from '../src/client/index.js';
import { apiClient, startTestApp, waitFor, type TestApp } from './helpers/app.js';
import { expectAccessible, launchBrowser, onPage, signInWithKey } from './helpers/browser.js';
import { registerUser, type TestUser } from './helpers/users.js';

let t: TestApp;
let user: TestUser;
let browser: Browser;

const PHONE_DARK = { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, colorScheme: 'dark' as const };

beforeAll(async () => {
  await buildConsole({ typecheck: false });
  t = await startTestApp({
    GATEWAY_SKIP_AUTH: '0',
    // The scheduler too (a due schedule fires within a second); the tests poll the API.
    ROLES: 'all',
    RATE_LIMIT_REQUESTS: '100000',
    SCHEDULE_MIN_INTERVAL_MINS: '60',
  });
  user = await registerUser(t.base, 'console-schedules');
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const api = () => apiClient(t.base, user.h);

/** The next Monday 00:00 UTC strictly after `now`: Monday 09:00 in Asia/Tokyo (UTC+9, no daylight saving). */
function nextMondayMidnightUtc(now: Date): Date {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  while (d.getUTCDay() !== 1 || d.getTime() <= now.getTime()) d.setUTCDate(d.getUTCDate() + 1);
  return d;
}

/** The preview's runs as shown: each `datetime` and text. */
const previewRuns = (page: Page) =>
  page
    .getByTestId('cron-runs')
    .locator('time')
    .evaluateAll((els) => els.map((e) => ({ iso: e.getAttribute('datetime'), text: e.textContent })));

/** No horizontal scrolling of the page (tables scroll inside .table-wrap). */
async function expectNoSideScroll(page: Page): Promise<void> {
  const { scroll, client } = await page.evaluate(() => {
    const el = (globalThis as any).document.documentElement;
    return { scroll: el.scrollWidth as number, client: el.clientWidth as number };
  });
  expect(scroll).toBeLessThanOrEqual(client);
}

const openPage = async (page: Page, link: string, heading: string) => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
};

describe('schedules in the browser', () => {
  it('previews the next runs in the chosen timezone, shows a bad expression and a too-short interval, creates, pauses, resumes, deletes', async () => {
    await onPage(browser, 'schedules', async (page) => {
      await signInWithKey(page, t.base, user.h['X-API-Key']);
      await openPage(page, 'Schedules', 'Schedules');
      await page.getByText('No schedules yet.').waitFor();
      await expectAccessible(page, 'schedules (empty)');

      await page.getByLabel('Name', { exact: true }).fill('Weekly report');
      await page.getByLabel('Cron expression').fill('0 9 * * 1');
      await page.getByLabel('Timezone').fill('UTC');
      await expect.poll(async () => (await previewRuns(page))[0]?.text).toMatch(/^Mon \d{4}-\d\d-\d\d 09:00$/);
      // The same expression in Tokyo: Monday 09:00 there is Monday 00:00 UTC.
      await page.getByLabel('Timezone').fill('Asia/Tokyo');
      const expected = nextMondayMidnightUtc(new Date());
      await expect.poll(async () => (await previewRuns(page))[0]?.iso).toBe(expected.toISOString());
      const runs = await previewRuns(page);
      expect(runs).toHaveLength(5);
      const day = expected.toISOString().slice(0, 10);
      expect(runs[0]!.text).toBe(`Mon ${day} 09:00`);
      // Weekly: each run seven days after the one before.
      for (let i = 1; i < 5; i++) expect(Date.parse(runs[i]!.iso!) - Date.parse(runs[i - 1]!.iso!)).toBe(7 * 86_400_000);
      await page.getByText('Next 5 runs (Asia/Tokyo):').waitFor();

      // An expression that does not parse: its error instead of runs.
      await page.getByLabel('Cron expression').fill('61 9 * * 1');
      await expect.poll(() => page.getByTestId('cron-error').innerText()).toBe('The minute must be between 0 and 59.');
      expect(await page.getByTestId('cron-runs').count()).toBe(0);
      await page.getByLabel('Cron expression').fill('0 9 * *');
      await expect.poll(() => page.getByTestId('cron-error').innerText()).toContain('Expected 5 fields');

      // Every five minutes parses (the preview shows it) but the service refuses it: under SCHEDULE_MIN_INTERVAL_MINS.
      await page.getByLabel('Cron expression').fill('*/5 * * * *');
      await expect.poll(async () => (await previewRuns(page)).length).toBe(5);
      await page.getByLabel('Task query (run each time)').fill('Summarise the week');
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await expect
        .poll(() => page.getByTestId('schedule-form-error').innerText())
        .toBe('schedule interval too short: runs must be at least 60 minutes apart, this cron expression runs 5 minutes apart');
      expect(ok(await api().GET('/api/v1/schedules')).total).toBe(0);
      await expectAccessible(page, 'schedules (refused)');

      await page.getByLabel('Cron expression').fill('0 9 * * 1');
      await page.getByRole('button', { name: 'Create schedule' }).click();
      await page.getByTestId('schedules-notice').getByRole('link', { name: 'Weekly report' }).waitFor();
      const list = ok(await api().GET('/api/v1/schedules'));
      expect(list.schedules).toHaveLength(1);
      const s = list.schedules[0]!;
      expect(s).toMatchObject({ name: 'Weekly report', cron_expression: '0 9 * * 1', timezone: 'Asia/Tokyo', status: 'ACTIVE' });
      expect(s.next_run_at).toBe(expected.toISOString());
      const row = page.locator(`[data-testid="schedule-row"][data-id="${s.id}"]`);
      expect(await row.locator('time').getAttribute('datetime')).toBe(expected.toISOString());
      expect(await row.innerText()).toContain('ACTIVE');

      await row.getByRole('link', { name: 'Weekly report' }).click();
      await page.getByRole('heading', { name: 'Schedule: Weekly report', level: 1 }).waitFor();
      expect(await page.getByTestId('schedule-status').innerText()).toBe('ACTIVE');
      await page.getByText('No runs yet.').waitFor();
      await expectAccessible(page, 'schedule detail');

      const statusOf = async () => ok(await api().GET('/api/v1/schedules/{id}', { params: { path: { id: s.id } } })).status;
      await page.getByLabel('Reason for pausing (optional)').fill('holidays');
      await page.getByRole('button', { name: 'Pause' }).click();
      await expect.poll(() => page.getByTestId('schedule-status').innerText()).toBe('PAUSED');
      await page.getByText('Schedule paused successfully', { exact: false }).waitFor();
      expect(await statusOf()).toBe('PAUSED');

      await page.getByRole('button', { name: 'Resume' }).click();
      await expect.poll(() => page.getByTestId('schedule-status').innerText()).toBe('ACTIVE');
      expect(await statusOf()).toBe('ACTIVE');

      // Delete, by keyboard: the button, then the question (focused), then "Delete permanently".
      await page.getByRole('button', { name: 'Delete schedule' }).focus();
      await page.keyboard.press('Enter');
      // The focused element's text, compared whole: the page's body (focused while the question
      // renders, before it takes the focus) contains the question too.
      const focused = () => page.evaluate(() => (globalThis as any).document.activeElement?.textContent as string);
      const question = 'Delete the schedule “Weekly report” permanently? It will not run again.';
      await expect.poll(focused).toBe(question);
      // Escape takes it back; the focus returns to the button.
      await page.keyboard.press('Escape');
      await expect.poll(focused).toBe('Delete schedule');
      await page.keyboard.press('Enter');
      await expect.poll(focused).toBe(question);
      await page.keyboard.press('Tab');
      expect(await focused()).toBe('Delete permanently');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
      await expect.poll(() => page.getByTestId('schedules-notice').innerText()).toBe('Schedule “Weekly report” deleted.');
      await page.getByText('No schedules yet.').waitFor();
      const gone = await api().GET('/api/v1/schedules/{id}', { params: { path: { id: s.id } } });
      expect(gone.response.status).toBe(404);
    });
  }, 90_000);

  it("lists a schedule's runs, each linking to its task (phone width, dark)", async () => {
    const created = ok(
      await api().POST('/api/v1/schedules', {
        body: { name: 'Nightly digest', cron_expression: '30 2 * * *', timezone: 'Europe/Paris', task_query: 'What is the capital of France?' },
      }),
    );
    const id = created.schedule_id;
    // Due now: the scheduler fires it within a second, and the run's task completes on the offline model.
    // (A whole millisecond, as makeDue in test/helpers/schedules.ts: a next_run_at with microseconds was never fired here.)
    await t.app.store.sql`UPDATE schedules SET next_run_at = date_trunc('milliseconds', now() - interval '1 minute') WHERE id = ${id}`;
    const run = await waitFor(
      async () => {
        const r = ok(await api().GET('/api/v1/schedules/{id}/runs', { params: { path: { id } } })).runs[0];
        return r && r.workflow_id && !['PENDING', 'RUNNING'].includes(r.status) ? r : undefined;
      },
      30_000,
      200,
    );
    await onPage(
      browser,
      'schedule-runs',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']);
        await expectNoSideScroll(page);
        await openPage(page, 'Schedules', 'Schedules');
        await page.getByRole('link', { name: 'Nightly digest' }).waitFor();
        // The form with its preview, at phone width in dark mode.
        await page.getByLabel('Cron expression').fill('30 2 * * *');
        await page.getByLabel('Timezone').fill('Europe/Paris');
        await expect.poll(async () => (await previewRuns(page)).length).toBe(5);
        expect((await previewRuns(page)).every((r) => / 02:30$/.test(r.text ?? ''))).toBe(true);
        await expectNoSideScroll(page);
        await expectAccessible(page, 'schedules (phone, dark)');

        await page.getByRole('link', { name: 'Nightly digest' }).click();
        await page.getByRole('heading', { name: 'Schedule: Nightly digest', level: 1 }).waitFor();
        const row = page.getByTestId('schedule-run').first();
        const link = row.getByRole('link', { name: 'What is the capital of France?' });
        await link.waitFor();
        expect(await link.getAttribute('href')).toBe(`#/tasks/${run.workflow_id}`);
        expect(await row.innerText()).toContain(run.status);
        await expectNoSideScroll(page);
        await expectAccessible(page, 'schedule detail with runs (phone, dark)');
        await link.click();
        await page.waitForURL(new RegExp(`#/tasks/${run.workflow_id}$`));
      },
      PHONE_DARK,
    );
  }, 90_000);
});

describe('channels and daemons in the browser', () => {
  it('creates a channel and shows its webhook URL (never a credential), lists a connected daemon until it leaves, deletes the channel (phone width, dark)', async () => {
    const secrets = { signing_secret: 'sig-SECRET-1a2b3c', bot_token: 'bot-SECRET-4d5e6f', app_id: 'APP-SECRET-789' };
    await onPage(
      browser,
      'channels',
      async (page) => {
        await signInWithKey(page, t.base, user.h['X-API-Key']);
        await openPage(page, 'Channels', 'Channels and daemons');
        await page.getByText('No channels yet.').waitFor();
        await expect.poll(() => page.getByTestId('daemon-count').innerText()).toBe('No daemon connected.');
        await expectNoSideScroll(page);
        await expectAccessible(page, 'channels (empty, phone, dark)');

        await page.getByLabel('Platform').selectOption('platform_a');
        await page.getByLabel('Name', { exact: true }).fill('Team chat');
        await page.getByLabel('Signing secret').fill(secrets.signing_secret);
        await page.getByLabel('Bot token').fill(secrets.bot_token);
        await page.getByLabel('App id').fill(secrets.app_id);
        await page.getByLabel('Agent name (optional: route messages to this agent)').fill('helper');
        await page.getByRole('button', { name: 'Create channel' }).click();
        const card = page.getByTestId('channel').filter({ has: page.getByRole('heading', { name: 'Team chat' }) });
        await card.waitFor();
        await page.getByText('Channel “Team chat” created: paste its webhook URL into the platform.').waitFor();

        const channels = ok(await api().GET('/api/v1/channels'));
        expect(channels).toHaveLength(1);
        const c = channels[0]!;
        expect(c).toMatchObject({ type: 'platform_a', name: 'Team chat', config: { agent_name: 'helper' }, enabled: true });
        const url = `${t.base}/api/v1/channels/${c.id}/webhook`;
        expect(await card.getByLabel(/^Webhook URL/).inputValue()).toBe(url);
        expect(await card.innerText()).toContain('helper');
        // The service's refusal shown as it comes: the same name again is a duplicate (409).
        await page.getByLabel('Name', { exact: true }).fill('Team chat');
        await page.getByLabel('Signing secret').fill(secrets.signing_secret);
        await page.getByLabel('Bot token').fill(secrets.bot_token);
        await page.getByLabel('App id').fill(secrets.app_id);
        await page.getByRole('button', { name: 'Create channel' }).click();
        await expect.poll(() => page.getByTestId('channel-form-error').innerText()).toBe('A platform_a channel named "Team chat" already exists');
        await page.getByLabel('Name', { exact: true }).fill('');
        for (const label of ['Signing secret', 'Bot token', 'App id']) await page.getByLabel(label).fill('');
        // It is the channel's webhook: unsigned, the service refuses it (401), where an unknown channel is 404.
        expect((await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
        // No credential anywhere on the page: not in its text, not in any field (the form was cleared).
        const text = await page.locator('body').innerText();
        const values = await page.locator('input, textarea').evaluateAll((els) => els.map((e) => (e as any).value as string));
        for (const v of Object.values(secrets)) {
          expect(text).not.toContain(v);
          expect(values.join('\n')).not.toContain(v);
        }
        await expectNoSideScroll(page);
        await expectAccessible(page, 'channels (one channel, phone, dark)');

        // Disabled (PUT {enabled: false}) and enabled again.
        const enabledOf = async () => ok(await api().GET('/api/v1/channels/{id}', { params: { path: { id: c.id } } })).enabled;
        await card.getByRole('button', { name: 'Disable' }).click();
        await expect.poll(() => card.getByTestId('channel-enabled').innerText()).toBe('disabled');
        expect(await enabledOf()).toBe(false);
        await card.getByRole('button', { name: 'Enable' }).click();
        await expect.poll(() => card.getByTestId('channel-enabled').innerText()).toBe('enabled');
        expect(await enabledOf()).toBe(true);

        // A daemon connects over the daemon WebSocket: listed after a reload, with the API's connection id.
        const ws = new WebSocket(`${t.base.replace('http', 'ws')}/v1/ws/messages`, { headers: user.h });
        const connected = new Promise<void>((res, rej) => {
          ws.on('message', (d) => {
            if (JSON.parse(String(d)).type === 'connected') res();
          });
          ws.once('error', rej);
        });
        await connected;
        const [daemon] = ok(await api().GET('/api/v1/daemon/status')).daemons;
        expect(daemon).toBeDefined();
        await page.reload();
        await page.getByRole('heading', { name: 'Channels and daemons', level: 1 }).waitFor();
        await expect.poll(() => page.getByTestId('daemon-count').innerText()).toBe('1 daemon connected.');
        expect(await page.getByTestId('daemon').innerText()).toContain(daemon!.connection_id);
        await expectNoSideScroll(page);
        await expectAccessible(page, 'channels with a daemon (phone, dark)');
        await page.setViewportSize({ width: 1280, height: 900 });

        // It disconnects: none after a reload.
        ws.close();
        await waitFor(async () => ok(await api().GET('/api/v1/daemon/status')).count === 0, 10_000, 100);
        await page.reload();
        await page.getByRole('heading', { name: 'Channels and daemons', level: 1 }).waitFor();
        await expect.poll(() => page.getByTestId('daemon-count').innerText()).toBe('No daemon connected.');
        expect(await page.getByTestId('daemon').count()).toBe(0);

        // Delete, after the confirm step.
        const reloaded = page.getByTestId('channel').filter({ has: page.getByRole('heading', { name: 'Team chat' }) });
        await reloaded.getByRole('button', { name: 'Delete channel' }).click();
        await reloaded.getByText('Delete the channel “Team chat” permanently? Its webhook URL stops working.').waitFor();
        await reloaded.getByRole('button', { name: 'Delete permanently' }).click();
        await page.getByText('Channel “Team chat” deleted.').waitFor();
        await page.getByText('No channels yet.').waitFor();
        expect(ok(await api().GET('/api/v1/channels'))).toEqual([]);
      },
      PHONE_DARK,
    );
  }, 90_000);
});
