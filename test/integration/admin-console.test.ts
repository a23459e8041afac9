// The web console as the admin listener serves it, without a browser (test/integration/console-browser
// drives it in Chromium): its files with their content types, caching and a strict Content-Security-
// Policy; no inline script or style for that policy to allow; and the /events stream it reads: refused
// without the token, then views on connect, audit lines as calls are made, a view again when a session
// is ended, and a bounded number of streams. A real gateway with a real stdio upstream and SDK client.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp, type App } from '../../src/app.js';
import { MAX_STREAMS } from '../../src/admin/admin-events.js';
import { CONSOLE_DIR, loadConsoleAssets } from '../../src/admin/console-assets.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { events, type Events } from '../helpers/admin-events.js';
import { connectClient } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'console-token-for-tests-0123456789-abcdef';
const CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";
const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

describe('admin console: files, security headers, live events', () => {
  let app: App;
  let gw: RunningGateway;
  let admin: string;

  before(async () => {
    const config = parseConfig({
      server: { host: '127.0.0.1', port: 0 },
      metrics: { enabled: false },
      logging: { level: process.env.LOG_LEVEL ?? 'silent' },
      admin: { enabled: true, port: 0, token: TOKEN },
      audit: { enabled: true },
      upstreams: [{ name: 'lab', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' }],
      endpoints: [{ path: '/mcp', upstreams: ['lab'] }],
    });
    app = await buildApp(config, { logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
    const base = (await app.listen()).replace('localhost', '127.0.0.1');
    gw = { app, base, url: (p = '/mcp') => new URL(p, base), close: () => app.close() };
    admin = app.adminUrl!;
  });
  after(() => app?.close());

  it('serves the page and its files without a token, with their content types, an ETag and the strict policy', async () => {
    const expected: Record<string, string> = { '/': 'text/html; charset=utf-8', '/console/console.js': 'text/javascript; charset=utf-8', '/console/dom.js': 'text/javascript; charset=utf-8', '/console/stream.js': 'text/javascript; charset=utf-8', '/console/console.css': 'text/css; charset=utf-8', '/console/icon.svg': 'image/svg+xml' };
    for (const [path, type] of Object.entries(expected)) {
      const res = await fetch(new URL(path, admin));
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), type, path);
      assert.equal(res.headers.get('content-security-policy'), CSP, path);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
      assert.equal(res.headers.get('cache-control'), 'no-cache', path);
      const etag = res.headers.get('etag')!;
      assert.match(etag, /^"[\w-]+"$/, path);
      await res.arrayBuffer();
      const again = await fetch(new URL(path, admin), { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304, `${path} revalidates`);
    }
    for (const path of ['/console/nope.js', '/console/index.html', '/console/..%2Fpackage.json', '/console/']) assert.equal((await fetch(new URL(path, admin))).status, 404, path);
  });

  it('API answers and refusals carry the same policy and are never cached', async () => {
    const refused = await fetch(new URL('/upstreams', admin));
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('content-security-policy'), CSP);
    const ok = await fetch(new URL('/upstreams', admin), { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-security-policy'), CSP);
    assert.equal(ok.headers.get('cache-control'), 'no-store');
  });

  // The stream and the router's own refusals are written past the listener's onSend hook (a hijacked
  // response; an answer before any hook): they went out without any of these headers, the stream carrying
  // every view and the audit tail (found by a review, 2026-12-07).
  it('the event stream and the answers of the router itself carry the same headers', async () => {
    const abort = new AbortController();
    const stream = await fetch(new URL('/events', admin), { headers: { authorization: `Bearer ${TOKEN}` }, signal: abort.signal });
    const badUrl = await fetch(new URL('/%zz', admin));
    const longParam = await fetch(new URL(`/sessions/${'x'.repeat(101)}`, admin), { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
    abort.abort();
    for (const [what, res, status, cache] of [['/events', stream, 200, 'no-store'], ['a malformed path', badUrl, 400, 'no-store'], ['an over-long parameter', longParam, 414, 'no-store']] as const) {
      assert.equal(res.status, status, what);
      assert.equal(res.headers.get('content-security-policy'), CSP, what);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', what);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer', what);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'same-origin', what);
      assert.equal(res.headers.get('cache-control'), cache, what);
    }
  });

  it('the console has no inline script, style or event handler for the policy to allow, and builds no markup from strings', () => {
    const html = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8');
    for (const m of html.matchAll(/<script\b[^>]*>/g)) assert.match(m[0], /\bsrc="\/console\/[\w.-]+\.js"/, `inline script: ${m[0]}`);
    assert.doesNotMatch(html, /<style\b|\sstyle=|\son[a-z]+=/i);
    for (const f of readdirSync(CONSOLE_DIR).filter((n) => n.endsWith('.js'))) {
      const js = readFileSync(join(CONSOLE_DIR, f), 'utf8');
      assert.doesNotMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/, f);
    }
    const { assets, problem } = loadConsoleAssets(join(CONSOLE_DIR, 'missing'));
    assert.equal(assets.size, 0);
    assert.match(problem!, /the console's files are missing .*the admin API works without them/);
  });

  it('/events: refused without the token; views on connect, audit lines as calls are made, sessions again when one is ended', async () => {
    assert.equal((await events(admin, null)).status, 401);
    assert.equal((await events(admin, `${TOKEN}x`)).status, 401);
    const client = await connectClient(gw, 'streamable-http');
    const { stream } = await events(admin, TOKEN);
    try {
      await until('the views on connect', () => ['hello', 'sessions', 'upstreams', 'tenants', 'pins'].every((e) => stream!.seen.some((s) => s.event === e)));
      const hello = stream!.seen.find((s) => s.event === 'hello')!.data;
      assert.deepEqual({ ...hello, time: typeof hello.time }, { replica: app.gateway.cluster?.replicaId ?? (await import('node:os')).hostname(), audit: true, time: 'number' });
      const sessions = stream!.seen.find((s) => s.event === 'sessions')!.data.items;
      assert.equal(sessions.length, 1);
      assert.equal(stream!.seen.find((s) => s.event === 'upstreams')!.data.items[0].name, 'lab');
      await client.callTool({ name: 'label', arguments: {} });
      await until('the call in the audit tail', () => stream!.seen.some((s) => s.event === 'audit' && s.data.lines.some((l: any) => l.name === 'label' && l.method === 'tools/call' && l.outcome === 'ok')));
      const ended = await fetch(new URL(`/sessions/${sessions[0].id}`, admin), { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ended.status, 200);
      await until('the sessions view without it', () => stream!.seen.some((s) => s.event === 'sessions' && s.data.items.length === 0));
    } finally {
      stream?.close();
      await client.close();
    }
  });

  it(`at most ${MAX_STREAMS} streams at once; a closed one frees its place`, async () => {
    const open: Events[] = [];
    try {
      for (let i = 0; i < MAX_STREAMS; i++) {
        const r = await events(admin, TOKEN);
        assert.equal(r.status, 200);
        open.push(r.stream!);
      }
      const busy = await events(admin, TOKEN);
      assert.equal(busy.status, 503);
      assert.match(busy.body, /at most 16 console streams/);
      open.pop()!.close();
      await until('a place freed', async () => {
        const r = await events(admin, TOKEN);
        if (r.stream) open.push(r.stream);
        return r.status === 200;
      });
    } finally {
      for (const s of open) s.close();
    }
  });
});
