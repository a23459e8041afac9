// The console's Reload button in Chromium with two replicas on Redis (found by a review). POST /reload
// has every replica reload its own file and answers each one's report under `replicas`; the page showed
// the top-level report alone (the replica it talks to), so a reload that another replica refused, its
// file invalid, read "Unchanged: the file is the config in force." and nothing else. Each replica's
// outcome must be shown, with its problems.
// Skipped, saying why, when Chromium is not installed (CHROMIUM_PATH, default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { events } from '../helpers/admin-events.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startReplicaFrom, startReplicas, writeEverythingConfig, type Replica } from '../helpers/replicas.js';
import { until } from '../helpers/wait.js';

const skip = chromiumSkip;
const TOKEN = 'browser-reload-replicas-token-0123456789';

/** The replica's id, as its own event stream says it (`hello`). */
async function replicaId(r: Replica): Promise<string> {
  const { stream } = await events(r.admin!, TOKEN);
  try {
    await until('hello', () => stream!.seen.length > 0);
    return stream!.seen[0]!.data.replica as string;
  } finally {
    stream!.close();
  }
}

describe('console: a reload that another replica refuses', { skip, timeout: 120_000 }, () => {
  let redis: TestRedis;
  let a: Replica;
  let b: Replica;
  let fileB: string;
  let browser: Browser;
  let page: Page;

  before(async () => {
    redis = await startRedis();
    const config = (name: string) =>
      writeEverythingConfig(name, {
        store: `{ redis: { url: "${redis.url}", heartbeatMs: 200, replicaTtlMs: 1000 } }`,
        extraYaml: `admin: { enabled: true, port: 0, token: "${TOKEN}" }\n`,
      });
    fileB = config('b');
    [a, b] = await startReplicas([startReplicaFrom('a', config('a')), startReplicaFrom('b', fileB)]);
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    for (const r of [a, b]) r?.child.kill('SIGKILL');
    await redis?.stop();
  });

  it("shows every replica's outcome: the other one's file is invalid, with its problem", async () => {
    const idB = await replicaId(b);
    await page.goto(a.admin!);
    const token = page.getByLabel('Admin token, or a JWT with the admin scope');
    await token.fill(TOKEN);
    await token.press('Enter');
    await page.getByRole('status').filter({ hasText: /^Live · replica / }).waitFor();
    writeFileSync(fileB, readFileSync(fileB, 'utf8').replace('shutdownGraceMs: 5000', 'shutdownGraceMs: soon'));
    await page.getByRole('button', { name: 'Reload the config' }).click();
    const result = page.locator('#reload-result');
    await result.filter({ hasText: /\S/ }).waitFor();
    const said = (await result.textContent()) ?? '';
    assert.match(said, new RegExp(`Replica ${idB}\\b[^]*Invalid: nothing was changed`), said);
    assert.match(said, /server\.shutdownGraceMs/, `b's problem is shown: ${said}`);
    assert.match(said, /Unchanged/, `a's own outcome is still shown: ${said}`);
  });
});
