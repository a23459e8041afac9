// Many calls in flight when a remote upstream forgets its session all wait for the one re-initialize:
// each waits on the instance's 'ready' and its halt signal, a listener each, which is the design; Node's
// "possible memory leak" warning past ten listeners would be a false alarm in the operator's log.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { legacyHttpPool, startLegacyHttpUpstream } from '../../helpers/legacy-http-upstream.js';

const CALLS = 30;
const caller = { id: 's', tenant: 't', clientRequest: async () => ({}), clientNotify: () => {} } as never;

describe('calls waiting for a re-initialize', () => {
  it(`${CALLS} calls refused for a forgotten session are all answered, and Node warns of no listener leak`, async () => {
    const held: ServerResponse[] = [];
    const up = await startLegacyHttpUpstream((_req, res, m, session) => {
      if (session === 1) {
        // The first session: every call is held, then all are refused at once (the server restarted).
        held.push(res);
        if (held.length === CALLS) for (const r of held.splice(0)) r.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [] } }));
    });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const gw = await legacyHttpPool(up.url);
    try {
      const answers = await Promise.all(Array.from({ length: CALLS }, () => gw.instance.request('tools/list', {}, { caller })));
      assert.ok(answers.every((a) => Array.isArray((a as { tools?: unknown }).tools)));
      assert.ok(up.inits() >= 2, `re-initialized (${up.inits()} initialize requests)`);
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')), []);
    } finally {
      process.off('warning', onWarning);
      await gw.close();
      up.close();
    }
  });
});
