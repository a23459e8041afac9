// The console's pending-pin cards in Chromium when two (upstream, tool) pairs join into the same text
// (found by a review): the cards' element ids were `pin-${upstream}-${tool}`, so upstream `a` with tool
// `b-c` and upstream `a-b` with tool `c` shared them. Each card's aria-labelledby then named the first
// card's heading, and after a re-render the page put keyboard focus back by id, on the other card's
// button: Enter then decided the wrong tool. Both upstreams are real catalogue processes whose tools do
// not match their config pins, so both are pending from the first listing.
// Skipped, saying why, when Chromium is not installed (CHROMIUM_PATH, default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../helpers/sdk.js';

const skip = chromiumSkip;
const TOKEN = 'browser-pin-ids-token-0123456789-abcdefgh';
const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'catalogue-server.mjs');
/** A hash no definition has: the tool is pending from its first sighting. */
const WRONG = '0'.repeat(64);

describe('console: pin cards whose upstream and tool names join alike', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-console-pin-ids-'));
  let gw: RunningGateway;
  let client: Client;
  let browser: Browser;
  let page: Page;

  before(async () => {
    const upstream = (name: string, tool: string) => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify([{ name: tool, description: `Tool ${tool} of ${name}.`, inputSchema: { type: 'object' } }]));
      return { name, transport: 'stdio' as const, command: process.execPath, args: [CATALOGUE, '--tools', file], sandbox: 'none' as const };
    };
    gw = await startGateway({
      admin: { enabled: true, port: 0, token: TOKEN },
      pinning: { pins: { a: { 'b-c': WRONG }, 'a-b': { c: WRONG } } },
      upstreams: [upstream('a', 'b-c'), upstream('a-b', 'c')],
      endpoints: [{ path: '/mcp', upstreams: ['a', 'a-b'] }],
    });
    client = await connectClient(gw, 'streamable-http');
    await client.listTools();
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(gw.app.adminUrl!);
    const token = page.getByLabel('Admin token, or a JWT with the admin scope');
    await token.fill(TOKEN);
    await token.press('Enter');
    await page.getByRole('status').filter({ hasText: /^Live · replica / }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await client?.close().catch(() => {});
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives each card ids of its own: its name is its own heading, and focus never moves to the other card', async () => {
    const first = page.getByRole('article', { name: 'a / b-c' });
    const second = page.getByRole('article', { name: 'a-b / c' });
    await first.waitFor();
    await second.waitFor();
    // (Page code as strings: the test is compiled without the DOM's types.)
    const ids = (await page.evaluate(`[...document.querySelectorAll('#pins-body [id]')].map((e) => e.id)`)) as string[];
    assert.equal(new Set(ids).size, ids.length, `ids repeat: ${ids.join(' ')}`);
    // Keyboard focus on the later card's Approve while the other card changes (rejected through the API):
    // the cards are re-rendered, and focus must come back to the same button, not the other card's.
    const later = (await page.locator('article.pin h3').last().textContent())!.startsWith('a-b / c') ? second : first;
    const other = later === first ? { upstream: 'a-b', tool: 'c', card: second } : { upstream: 'a', tool: 'b-c', card: first };
    await later.getByRole('button', { name: 'Approve' }).focus();
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(new URL(path, gw.app.adminUrl!), { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
    const { items } = await admin('GET', '/pins');
    const hash = items.find((p: any) => p.upstream === other.upstream && p.tool === other.tool).pendingHash;
    assert.equal((await admin('POST', `/pins/${other.upstream}/reject`, { tools: [{ tool: other.tool, hash }] })).items[0].outcome, 'rejected');
    await other.card.getByText('rejected', { exact: true }).waitFor();
    const focused = await page.evaluate(`[document.activeElement?.textContent, document.activeElement?.closest('article')?.querySelector('h3')?.textContent]`);
    assert.deepEqual(focused, ['Approve', await later.locator('h3').textContent()], 'focus stays on the button it was on');
  });
});
