// The console's Restart button in Chromium when the restart cannot be applied (found by a review). The
// admin API answers a restart with its report (200, `result` "applied" or "failed" with the problems, as
// a reload); the console read only the status and said "restarted; the old instances drain" for a
// restart that changed nothing. Here the gateway's token verification cannot be rebuilt (its key file
// is gone), so the restart fails; the page must say so, with the problem.
// Skipped, saying why, when Chromium is not installed (CHROMIUM_PATH, default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, makeKey } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const skip = chromiumSkip;
const TOKEN = 'browser-restart-token-0123456789-abcdefgh';

describe('console: an upstream restart that fails', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-console-restart-'));
  const keyFile = join(dir, 'issuer.pem');
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;

  before(async () => {
    writeFileSync(keyFile, (await makeKey('k1')).spki);
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile] },
      tenants: [{ name: 't', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    await until('the upstream is up', () => gw.app.gateway.pools.get('fx')!.ready);
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says the restart failed and why, not that it restarted', async () => {
    await page.goto(gw.app.adminUrl!);
    const token = page.getByLabel('Admin token, or a JWT with the admin scope');
    await token.fill(TOKEN);
    await token.press('Enter');
    await page.getByRole('status').filter({ hasText: /^Live · replica / }).waitFor();
    const before = gw.app.gateway.pools.get('fx');
    rmSync(keyFile); // verification cannot be rebuilt: the restart changes nothing
    await page.getByRole('button', { name: 'Restart upstream fx' }).click();
    const result = page.locator('#upstreams-result');
    await result.filter({ hasText: /\S/ }).waitFor();
    const said = (await result.textContent()) ?? '';
    assert.equal(gw.app.gateway.pools.get('fx'), before, 'the restart was not applied');
    assert.match(said, /fx.*not restarted/i, said);
    assert.match(said, /issuer\.pem/, `the problem is shown: ${said}`);
  });
});
