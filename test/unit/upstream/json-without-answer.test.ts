// A 2025-era Streamable HTTP upstream must answer a request's POST with its answer: an SSE stream that
// carries it, or a JSON body that is it. One that answered 200 application/json with no answer to the
// request in the body (empty, a notification only, another request's answer) left the call waiting for an
// answer that cannot come (a JSON body is not resumed, and the GET stream carries no answers) until its
// request timeout. Now the call fails at once, saying what the upstream sent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startLegacyHttpUpstream, type LegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';
import { callFailure as failure } from '../../helpers/sdk-http-upstream.js';

/** An upstream (no GET stream) that answers every request but initialize 200 application/json with `body(id)`. */
function upstream(body: (id: number) => string): Promise<LegacyHttpUpstream> {
  return startLegacyHttpUpstream((_req, res, m) => void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(body(m.id!)));
}

const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } });

describe('a 2025-era request answered 200 application/json without its answer (found by a review)', () => {
  const cases: [string, (id: number) => string][] = [
    ['an empty body', () => ''],
    ['a notification only', () => note],
    ['another request’s answer', (id) => JSON.stringify({ jsonrpc: '2.0', id: id + 1000, result: {} })],
  ];
  for (const [what, body] of cases) {
    it(`${what}: the call fails at once with SWB_UPSTREAM_UNAVAILABLE, not at its timeout`, async () => {
      const up = await upstream(body);
      try {
        const f = await failure(up.url);
        assert.equal(f.code, 'SWB_UPSTREAM_UNAVAILABLE', f.message);
        assert.match(f.message, /answered request \S+ with a JSON body that is not its answer/);
      } finally {
        up.close();
      }
    });
  }
});
