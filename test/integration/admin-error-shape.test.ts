// The admin API's errors have one shape, {error: {code, message}} (README "Admin API"), so a script reads
// every failure the same way (found by a review, 2026-12-06): an unknown route, a path that is no URL and
// a parameter over the router's length answered in Fastify's own shape ({message, error, statusCode}).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';

const TOKEN = 'admin-token-0123456789abcdef0123';

describe('admin API errors outside its routes', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`${gw.app.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('answers an unknown route, a bad URL and an over-long parameter in the API\'s shape', async () => {
    const cases: Array<[string, string, number, string]> = [
      ['/no-such-route', 'GET', 404, 'not_found'],
      ['/sessions', 'PUT', 404, 'not_found'],
      ['/sessions/%E0%A4%A', 'DELETE', 400, 'bad_request'],
      [`/upstreams/${'x'.repeat(500)}/restart`, 'POST', 414, 'uri_too_long'],
    ];
    for (const [path, method, status, code] of cases) {
      const r = await get(path, method);
      assert.equal(r.status, status, `${method} ${path.slice(0, 40)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body?.error?.code, code, `${method} ${path.slice(0, 40)}: ${JSON.stringify(r.body)}`);
      assert.equal(typeof r.body.error.message, 'string');
    }
  });
});
