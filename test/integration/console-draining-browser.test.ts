// The console's Upstreams panel in Chromium while a reload drains a replaced upstream (found by a review):
// the old pool's process runs until its call ends, so it is shown, marked draining, beside the pool in
// force, with no Restart button of its own (a restart acts on the pool in force); once stopped, it goes.
// Skipped, saying why, when Chromium is not installed (CHROMIUM_PATH, default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { fileGateway } from '../helpers/file-gateway.js';
import { heldDoc, holdCall, sets } from '../helpers/held-upstream.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const skip = chromiumSkip;
const TOKEN = 'browser-draining-token-0123456789-abcdefgh';

const doc = (names: string[]) => heldDoc(sets(...names), { admin: { enabled: true, port: 0, token: TOKEN, drainGraceMs: 120_000 } });

describe('console: an upstream draining after a reload', { skip }, () => {
  it('shows the draining pool, marked, without a Restart button, until it stopped', async () => {
    const { app, gw, write, close } = await fileGateway('swb-console-drain-', doc(['hold']));
    const client = await connectClient(gw, 'streamable-http');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(app.adminUrl!);
      const token = page.getByLabel('Admin token, or a JWT with the admin scope');
      await token.fill(TOKEN);
      await token.press('Enter');
      await page.getByRole('status').filter({ hasText: /^Live · replica / }).waitFor();
      const { oldPid, stop } = await holdCall(app, client);
      write(doc(['hold', 'chat']));
      const { report, drained } = await app.reload('test');
      assert.equal(report.result, 'applied');
      const rows = page.locator('#upstreams-body tbody tr');
      const draining = rows.filter({ hasText: 'draining' });
      await draining.waitFor();
      assert.equal(await rows.count(), 2, 'the pool in force and the draining one');
      assert.match((await draining.textContent()) ?? '', new RegExp(`pid ${oldPid}\\b`), 'the draining row shows the old process');
      assert.equal(await draining.getByRole('button').count(), 0, 'a draining pool has no Restart button');
      assert.equal(await page.getByRole('button', { name: 'Restart upstream held' }).count(), 1, 'the pool in force keeps its button');
      stop.abort();
      await drained;
      await until('the stopped pool leaves the panel', async () => (await rows.count()) === 1);
      assert.equal(await draining.count(), 0);
    } finally {
      await browser.close();
      await client.close().catch(() => {});
      await close();
    }
  });
});
