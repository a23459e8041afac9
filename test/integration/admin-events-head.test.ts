// HEAD /events (a monitor's probe of every route, curl -I; found by a review, 2026-12-06): Fastify serves
// HEAD with the GET handler, which took the response over as an event stream. Node sends no body to a HEAD,
// so the headers, held for the first body byte, never went out: the probe was never answered, and it held
// one of the MAX_STREAMS console slots for as long as it stayed connected (16 of them: every console 503).
import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MAX_STREAMS } from '../../src/admin/admin-events.js';
import { events } from '../helpers/admin-events.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

describe('admin HEAD /events', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(() => gw.close());

  it('is answered with the stream headers, and holds no console slot', async () => {
    const admin = new URL(gw.app.adminUrl!);
    const answers: IncomingMessage[] = [];
    const probes: ClientRequest[] = [];
    try {
      for (let i = 0; i < MAX_STREAMS; i++) {
        // Each on a connection of its own, kept open (agent: false, keep-alive): as a probe that stays.
        const req = request({ host: admin.hostname, port: admin.port, path: '/events', method: 'HEAD', agent: false, headers: { host: admin.host, connection: 'keep-alive' } }, (res) => answers.push(res.resume()));
        req.on('error', () => {});
        probes.push(req.end());
      }
      await until('every HEAD answered', () => answers.length === MAX_STREAMS);
      for (const res of answers) {
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8');
      }
      const { status, stream, body } = await events(admin.href, null);
      assert.equal(status, 200, `a console still opens: ${body}`);
      stream!.close();
    } finally {
      for (const p of probes) p.destroy();
    }
  });
});
