// The web console in a real browser: Debian's Chromium driven by playwright-core, against a real gateway
// process fronting a real stdio upstream with tool pinning on. A rug pull adds a tool, which is pending;
// the operator signs in, sees the change as a side-by-side diff, approves it, and the official SDK
// client then sees and calls the tool; the operator ends that client's session and reloads the config
// (valid, then invalid: the problems are shown). No Content-Security-Policy violation along the way,
// and the page fits a phone's width. Screenshots go to test-results/console/ (git-ignored).
// Skipped, saying why, when Chromium is not installed (CHROMIUM_PATH, default /usr/bin/chromium).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const skip = chromiumSkip;
const ARTIFACTS = resolve('test-results', 'console');
const TOKEN = 'browser-console-token-0123456789-abcdefgh';
const FIXTURE = resolve('test/fixtures/shifty-server.mjs');

type Json = Record<string, any>;

function configOf(dir: string, extra: Json = {}): Json {
  return {
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 1000 },
    metrics: { enabled: false },
    admin: { enabled: true, port: 0, token: TOKEN },
    audit: { enabled: true },
    pinning: { file: join(dir, 'pins.json') },
    upstreams: [{ name: 'shifty', transport: 'stdio', sandbox: 'none', command: process.execPath, args: [FIXTURE, '--add-tool'], env: { SHIFT_FILE: join(dir, 'shift') } }],
    endpoints: [{ path: '/mcp', upstreams: ['shifty'] }],
    ...extra,
  };
}

/** A gateway process (`switchboard serve`): resolves with its MCP and admin URLs once both listen. */
function serve(file: string, child: { proc?: ChildProcess }): Promise<{ base: string; admin: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', file], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  child.proc = proc;
  let out = '';
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the gateway did not start: ${out}`)), 30_000);
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const base = /switchboard listening on (http:\/\/[^"\s]+)/.exec(out)?.[1];
      const admin = /"admin":"(http:\/\/[^"]+)"/.exec(out)?.[1];
      if (base && admin) {
        clearTimeout(timer);
        done({ base: base.replace('localhost', '127.0.0.1'), admin });
      }
    });
    proc.once('exit', (code) => fail(new Error(`the gateway exited (${code}): ${out}`)));
  });
}

describe('web console in Chromium', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-console-'));
  const file = join(dir, 'switchboard.yaml');
  const child: { proc?: ChildProcess } = {};
  let gw: RunningGateway;
  let admin: string;
  let browser: Browser;
  let page: Page;
  let client: Client;
  let relisted = 0;
  /** CSP violations and script errors the page reported. */
  const problems: string[] = [];

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const toolNames = async () => (await client.listTools()).tools.map((t) => t.name).sort();

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(file, JSON.stringify(configOf(dir)));
    const urls = await serve(file, child);
    admin = urls.admin;
    gw = { app: undefined as never, base: urls.base, url: (p = '/mcp') => new URL(p, urls.base), close: async () => {} };
    client = await connectClient(gw, 'streamable-http');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void relisted++);
    assert.deepEqual(await toolNames(), ['echo', 'weather'], 'the first listing is the baseline');
    // The rug pull: a new tool appears; the client re-lists, which records it as pending (withheld).
    writeFileSync(join(dir, 'shift'), '');
    await until('list_changed from the upstream', () => relisted > 0);
    assert.deepEqual(await toolNames(), ['echo', 'weather'], 'the new tool is withheld');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1180, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
  });

  after(async () => {
    await browser?.close();
    await client?.close().catch(() => {});
    child.proc?.kill('SIGTERM');
    if (child.proc && child.proc.exitCode === null) await new Promise((r) => child.proc!.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with the admin token (a wrong one is refused, said in an alert), from the keyboard', async () => {
    const res = await page.goto(admin);
    assert.equal(res!.headers()['content-security-policy'], "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'");
    const token = page.getByLabel('Admin token, or a JWT with the admin scope');
    await token.fill('not-the-token');
    await token.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'The token was refused' }).waitFor();
    await token.fill(TOKEN);
    await token.press('Enter');
    await page.getByRole('status').filter({ hasText: /^Live · replica / }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('switchboard.adminToken')), TOKEN);
  });

  it('shows the pending tool side by side and approves it; the SDK client then sees and calls it', async () => {
    const card = page.getByRole('article', { name: /shifty \/ weather2/ });
    await card.waitFor();
    assert.match(await card.textContent() ?? '', /new tool/);
    const diff = card.getByRole('table', { name: 'Definition diff' });
    assert.match((await diff.textContent()) ?? '', /<IMPORTANT>/, 'the pending definition, as text');
    await page.getByRole('heading', { name: 'Upstreams' }).waitFor();
    await page.getByRole('cell', { name: 'shifty' }).or(page.getByRole('rowheader', { name: 'shifty' })).first().waitFor();
    await shot('1-pending-pin');
    const before = relisted;
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.locator('#pins-result').filter({ hasText: 'shifty / weather2: approved' }).waitFor();
    await page.getByText('No tool definition changes are waiting.').waitFor();
    await until('list_changed after the approval', () => relisted > before);
    assert.deepEqual(await toolNames(), ['echo', 'weather', 'weather2']);
    assert.equal(textOf(await client.callTool({ name: 'weather2', arguments: { city: 'Oslo' } })), 'better: sunny in Oslo (v2)');
    // The live audit tail (role log) shows the approval and the call.
    const tail = page.getByRole('log');
    await tail.getByText('tool pin approved: shifty / weather2').waitFor();
    await tail.getByText(/tools\/call weather2 → allow, ok/).waitFor();
  });

  it("ends the client's session", async () => {
    const id = (client.transport as { sessionId?: string }).sessionId!;
    const end = page.getByRole('button', { name: `End session ${id.slice(0, 8)}` });
    await end.waitFor();
    await shot('2-sessions');
    await end.click();
    await page.locator('#sessions-result').filter({ hasText: `Session ${id.slice(0, 8)} ended by replica ` }).waitFor();
    await page.getByText('No open sessions.').waitFor();
    await assert.rejects(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
  });

  it('reloads: a valid file is applied; an invalid one changes nothing and lists its problems', async () => {
    // A changed upstream (one more environment variable): replaced by a fresh one, the old one drained.
    const changed = configOf(dir);
    changed.upstreams[0].env.EXTRA = '1';
    writeFileSync(file, JSON.stringify(changed));
    const reload = page.getByRole('button', { name: 'Reload the config' });
    await reload.click();
    await page.locator('#reload-result').filter({ hasText: 'Applied.' }).filter({ hasText: 'changed: shifty' }).waitFor();
    const bad = configOf(dir);
    bad.admin.port = 'nine';
    writeFileSync(file, JSON.stringify(bad));
    await reload.click();
    const result = page.locator('#reload-result');
    await result.filter({ hasText: 'Invalid: nothing was changed.' }).waitFor();
    assert.match((await result.getByRole('listitem').allTextContents()).join('\n'), /^admin\.port/m);
    await shot('3-reload-invalid');
  });

  it('fits a narrow screen, and the page reported no policy violation or script error', async () => {
    await page.setViewportSize({ width: 380, height: 800 });
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    // (Page code as strings: the test is compiled without the DOM's types.)
    assert.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 380, 'no sideways scrolling of the page');
    await shot('4-narrow');
    assert.deepEqual(problems, []);
    // The policy is in force: a script injected inline does not run.
    const ran = await page.evaluate(`(async () => {
      const s = document.createElement('script');
      s.textContent = 'window.injected = true';
      document.body.append(s);
      await new Promise((r) => setTimeout(r, 50));
      return window.injected === true;
    })()`);
    assert.equal(ran, false);
  });
});
