// The console's Sessions panel in Chromium with more sessions than its live view holds (CONSOLE_SESSIONS):
// the view held every session, and with 100,000 in Redis each update read every record (see
// admin-events-bounded-views). The live table shows the first sessions by id and says more are open;
// Next loads the following page through GET /sessions, and the first (live) page comes back.
// Skipped, saying why, when Chromium is not installed (CHROMIUM_PATH, default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CONSOLE_SESSIONS } from '../../src/admin/admin-events.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RAW_HEADERS, RAW_INIT } from '../helpers/raw-mcp.js';

const TOKEN = 'browser-pages-token-0123456789-abcdefgh';
const SESSIONS = CONSOLE_SESSIONS + 7;

describe('console: sessions beyond the live page', { skip: chromiumSkip }, () => {
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;
  const ids: string[] = [];

  before(async () => {
    gw = await startGateway({
      admin: { enabled: true, port: 0, token: TOKEN },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    const open = async () => {
      const r = await fetch(gw.url('/mcp'), { method: 'POST', headers: RAW_HEADERS, body: JSON.stringify(RAW_INIT) });
      await r.body?.cancel();
      assert.equal(r.status, 200);
      ids.push(r.headers.get('mcp-session-id')!);
    };
    for (let i = 0; i < SESSIONS; i += 50) await Promise.all(Array.from({ length: Math.min(50, SESSIONS - i) }, open));
    ids.sort();
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('shows the first page live, pages on with Next, and returns to the live page', async () => {
    await page.goto(gw.app.adminUrl!);
    const token = page.getByLabel('Admin token, or a JWT with the admin scope');
    await token.fill(TOKEN);
    await token.press('Enter');
    await page.getByRole('button', { name: `End session ${ids[0]!.slice(0, 8)}` }).waitFor();
    const rows = () => page.locator('#sessions-body tbody tr').count();
    assert.equal(await rows(), CONSOLE_SESSIONS, 'the live page only');
    assert.match((await page.locator('#sessions-pager').textContent()) ?? '', /first 200 sessions by id; more are open/);
    await page.getByRole('button', { name: `Next ${CONSOLE_SESSIONS}` }).click();
    await page.getByRole('button', { name: `End session ${ids[CONSOLE_SESSIONS]!.slice(0, 8)}` }).waitFor();
    assert.equal(await rows(), SESSIONS - CONSOLE_SESSIONS, 'the rest');
    assert.match((await page.locator('#sessions-pager').textContent()) ?? '', /Page 2 by id/);
    assert.equal(await page.locator('#sessions-next').count(), 0, 'no page after the last');
    await page.getByRole('button', { name: 'First page (live)' }).click();
    await page.getByRole('button', { name: `End session ${ids[0]!.slice(0, 8)}` }).waitFor();
    assert.equal(await rows(), CONSOLE_SESSIONS);
  });
});
