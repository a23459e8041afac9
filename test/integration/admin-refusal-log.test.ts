// Refused admin requests and the log (found by a review, 2026-12-06). Every refusal (another site's page,
// a missing or wrong token) wrote a warning of its own: a page open in an operator's browser, or a
// scanner, could write the log as fast as it could send requests. Now at most a burst and a rate of
// them are written, and the rest are counted in a line of their own.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const SENT = 400;

function send(url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent: false }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('refused admin requests in the log', () => {
  let gw: RunningGateway;
  const lines: string[] = [];
  before(async () => {
    gw = await startGateway(
      {
        admin: { enabled: true, host: '127.0.0.1', port: 0, token: 'admin-token-0123456789abcdef0123' },
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines: lines },
    );
  });
  after(() => gw.close());

  const refusals = () => lines.map((l) => JSON.parse(l)).filter((l) => l.component === 'admin');
  const logged = () => refusals().filter((l) => /^admin API request refused/.test(l.msg)).length;
  const dropped = () => refusals().reduce((n, l) => n + (typeof l.dropped === 'number' ? l.dropped : 0), 0);

  it('writes a bounded number of warnings, and counts the rest', async () => {
    const base = new URL(gw.app.adminUrl!);
    const url = new URL('/reload', base);
    for (let i = 0; i < SENT; i++) {
      const status = await send(url, i % 2 === 0 ? { host: base.host, origin: 'https://evil.example' } : { host: base.host, authorization: 'Bearer wrong' });
      assert.ok(status === 403 || status === 401, String(status));
    }
    await until('every refusal logged or counted', () => logged() + dropped() >= SENT);
    assert.equal(logged() + dropped(), SENT, 'each refusal is in the log once: as a line or in a count');
    assert.ok(logged() < SENT, `${logged()} lines for ${SENT} refusals`);
  });
});
