// An OAuth callback's query carries an authorization code and its state. Fastify's default error handling
// logs a 5xx with the request (`req.url`, query and all); the gateway turns request logging off
// (disableRequestLogging, which that line obeys), its edge's own error handler logs the error and request id
// alone, the consent service answers its store's failures itself, and the consent routes' warnings name no
// URL. Pinned: refused callbacks, one of them logged (a repeated parameter), write no line carrying their
// code or state. From a review's question.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startConsentGateway, type ConsentGateway } from '../helpers/consent-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';

const CODE = 'code-that-must-not-be-logged-4711';
const STATE = 'state-that-must-not-be-logged-0815';

describe('the consent callback failing: its code and state in no log line', () => {
  const lines: string[] = [];
  let rig: ConsentGateway;
  let as: ConsentServer;
  let gw: RunningGateway;

  before(async () => {
    as = await startConsentServer({ audience: 'https://tickets.test' });
    // Nothing listens on port 9: the upstream is never reached, its consent routes are there all the same.
    rig = await startConsentGateway([{ name: 'tickets', path: '/mcp', url: 'http://127.0.0.1:9/mcp', authorizationServer: as.issuer }], {}, lines);
    gw = rig.gw;
  });
  after(async () => {
    await rig?.close();
    await as?.close();
  });

  it('refused callbacks, one logged at warn: the log holds neither their code nor their state', async () => {
    const query = `code=${CODE}&state=${STATE}&iss=${encodeURIComponent(as.issuer)}`;
    for (const path of ['/oauth/callback', '/oauth/callback/upstream/tickets', '/oauth/callback/sign-in', `/oauth/callback?code=${CODE}2`]) {
      const r = await fetch(new URL(`${path}${path.includes('?') ? '&' : '?'}${query}`, gw.base), { headers: { cookie: `x=${STATE}` } });
      await r.text();
      assert.equal(r.status, 400, path);
    }
    assert.ok(lines.some((l) => l.includes('names a parameter more than once')), 'the repeated code was not logged');
    assert.deepEqual(lines.filter((l) => l.includes(CODE) || l.includes(STATE)), []);
  });
});
