// The admin API against pages of other sites (found by a review, 2026-12-04). Without admin auth (allowed
// on loopback only) a page could POST /reload with no preflight, or rebind its own name to 127.0.0.1 and
// use every route as same-origin (read the pending pins, approve them). A loopback listener answers only
// requests that name it by a loopback name, and no listener answers a request from another origin.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

/** One request with the Host and Origin a browser would send (fetch may not set Host). */
function send(url: URL, method: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the admin API without admin auth, on loopback', () => {
  let gw: RunningGateway;
  let base: URL;
  before(async () => {
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    base = new URL(gw.app.adminUrl!);
  });
  after(() => gw.close());

  it('answers its own console and local clients', async () => {
    assert.equal((await send(new URL('/sessions', base), 'GET', { host: base.host })).status, 200);
    assert.equal((await send(new URL('/sessions', base), 'GET', { host: `localhost:${base.port}` })).status, 200);
    assert.equal((await send(new URL('/', base), 'GET', { host: base.host })).status, 200, 'the console');
    // The console's own POSTs carry its origin.
    assert.equal((await send(new URL('/reload', base), 'POST', { host: base.host, origin: base.origin })).status, 200);
  });

  it('refuses a name rebound to this machine (DNS rebinding), on every route', async () => {
    for (const [method, path] of [['GET', '/sessions'], ['GET', '/pins'], ['POST', '/reload'], ['GET', '/']] as const) {
      const r = await send(new URL(path, base), method, { host: `evil.example:${base.port}` });
      assert.equal(r.status, 403, `${method} ${path}: ${r.body}`);
    }
  });

  it('refuses a request from another origin (a page posting with no preflight)', async () => {
    for (const origin of ['https://evil.example', 'null', `http://localhost:${Number(base.port) + 1}`]) {
      const r = await send(new URL('/reload', base), 'POST', { host: base.host, origin });
      assert.equal(r.status, 403, `${origin}: ${r.body}`);
    }
  });

  it('refuses GETs from another site, which carry no Origin (an <img>, a no-cors fetch, an EventSource holding a console stream)', async () => {
    for (const site of ['cross-site', 'same-site']) {
      for (const path of ['/events', '/sessions', '/']) {
        const r = await send(new URL(path, base), 'GET', { host: base.host, 'sec-fetch-site': site });
        assert.equal(r.status, 403, `${site} ${path}: ${r.body}`);
      }
    }
    // The console itself (same-origin), an address typed into the browser (none), and clients that send none.
    for (const headers of [{ 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }, {}] as Array<Record<string, string>>) {
      assert.equal((await send(new URL('/sessions', base), 'GET', { host: base.host, ...headers })).status, 200, JSON.stringify(headers));
    }
  });
});
