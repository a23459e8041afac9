// The consent routes (/oauth/start, /oauth/callback..., /oauth/links) sat outside the edge plugin's scope,
// so what Fastify refuses before a route runs got Fastify's own error shape: a JSON or XML POST to
// /oauth/start, a form larger than its limit, and a DELETE /oauth/links/<upstream> sent with
// `Content-Type: application/json` and no body (as some HTTP clients send it) was refused with a framework
// 400 and the link stayed. A route's unexpected error was Fastify's 500 with the error's message. Now each is
// a defined answer: a page for a browser's route, the JSON of /oauth/links for its own, and a log line.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AddressInfo } from 'node:net';
import { startConsentServer, type ConsentServer } from '../helpers/consent-server.js';
import { startConsentGateway, type ConsentGateway } from '../helpers/consent-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { createHttpServer } from '../../src/edge/http-server.js';
import { registerConsentRoutes, type ConsentService } from '../../src/edge/consent-routes.js';
import type { EdgeAuth } from '../../src/edge/authorize-request.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';

/** The answer is the gateway's, not Fastify's default shape ({statusCode, code: FST_ERR_..., error, message}). */
function notFastifys(body: string): void {
  assert.doesNotMatch(body, /FST_ERR|"statusCode"/);
}

describe('consent routes: malformed requests get defined answers', () => {
  const lines: string[] = [];
  let rig: ConsentGateway;
  let as: ConsentServer;
  let gw: RunningGateway;
  let bearer: string;

  before(async () => {
    as = await startConsentServer({ audience: 'https://tickets.test' });
    // Nothing listens on port 9: the upstream is never reached, its consent routes are there all the same.
    rig = await startConsentGateway([{ name: 'tickets', path: '/mcp', url: 'http://127.0.0.1:9/mcp', authorizationServer: as.issuer }], {}, lines);
    gw = rig.gw;
    bearer = `Bearer ${rig.token}`;
  });
  after(async () => {
    await rig?.close();
    await as?.close();
  });

  const send = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const r = await fetch(new URL(path, gw.base), { method, headers, body, redirect: 'manual' });
    return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() };
  };

  it('a confirmation POSTed as JSON or XML: 415, a page saying it is not the form', async () => {
    for (const [type, body] of [['application/json', '{bad'], ['application/json', ''], ['application/xml', '<a/>']] as const) {
      const r = await send('POST', '/oauth/start', { 'content-type': type }, body);
      assert.equal(r.status, 415, `${type} ${body}`);
      assert.match(r.type, /^text\/html/);
      assert.match(r.body, /not the gateway page&#39;s form/);
      notFastifys(r.body);
    }
  });

  it('a confirmation form over the limit: 413, a page naming the limit, and a log line', async () => {
    const r = await send('POST', '/oauth/start', { 'content-type': 'application/x-www-form-urlencoded' }, `flow=${'a'.repeat(20_000)}`);
    assert.equal(r.status, 413);
    assert.match(r.type, /^text\/html/);
    assert.match(r.body, /limit of 16384 bytes/);
    notFastifys(r.body);
    assert.ok(lines.some((l) => l.includes('consent route refused a request') && l.includes('"status":413')), 'no log line for the 413');
  });

  it('an unknown state: 400, a page', async () => {
    const r = await send('GET', '/oauth/callback?state=unknown&code=c', {});
    assert.equal(r.status, 400);
    assert.match(r.body, /unknown, expired or already used/);
  });

  it('DELETE /oauth/links/<upstream> with a JSON content type and no body (or a malformed one): answered by the route', async () => {
    for (const body of ['', '{bad']) {
      const r = await send('DELETE', '/oauth/links/tickets', { authorization: bearer, 'content-type': 'application/json' }, body);
      assert.equal(r.status, 404, JSON.stringify(body));
      assert.deepEqual(JSON.parse(r.body), { error: 'no link to upstream "tickets"' });
    }
  });

  it('DELETE /oauth/links/<upstream> with a body over the limit: 413, JSON naming the limit', async () => {
    const r = await send('DELETE', '/oauth/links/tickets', { authorization: bearer, 'content-type': 'text/plain' }, 'x'.repeat(20_000));
    assert.equal(r.status, 413);
    assert.match(r.type, /^application\/json/);
    assert.match(JSON.parse(r.body).error, /limit of 16384 bytes/);
  });
});

describe('consent routes: a route failing unexpectedly', () => {
  it('answers 500 with a page of its own, not the error message, and logs the error', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(l) });
    const config = parseConfig({ tenants: [{ name: 'anonymous', endpoints: ['*'] }], upstreams: [{ name: 'one', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp' }], endpoints: [{ path: '/mcp', upstreams: ['one'] }] });
    const app = createHttpServer(config.server, logger);
    // The consent service stands in (a store failing mid-callback is answered by the real one itself).
    const fails = async (): Promise<never> => {
      throw new Error('secret internal detail');
    };
    const consent: ConsentService = { preview: fails, start: fails, callback: fails, links: fails, revoke: fails };
    registerConsentRoutes(app, { consent, auth: {} as EdgeAuth, secure: false, origin: 'http://127.0.0.1' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const r = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/oauth/callback?state=s&code=c`);
      const body = await r.text();
      assert.equal(r.status, 500);
      assert.match(r.headers.get('content-type') ?? '', /^text\/html/);
      assert.doesNotMatch(body, /secret internal detail/);
      notFastifys(body);
      assert.ok(lines.some((l) => l.includes('consent route failed') && l.includes('secret internal detail')), 'the error was not logged');
    } finally {
      await app.close();
    }
  });
});
