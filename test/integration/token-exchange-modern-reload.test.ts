// A reload that adds a token-exchange upstream to an endpoint: from the next 2026-07-28 request on, each
// request's call to it is exchanged from that request's own token. A standing's key (per principal, or per
// token with token exchange) was chosen once, when it was made, and a principal object found its standing
// again by it: requests whose token was verified before the reload (their body still on its way) went to
// the subject's shared standing, and the second was served with the first one's exchange. (Requests
// verified after it are new principal objects, the reload rebuilding token verification: they always
// chose again.) A file-configured gateway, reloaded; a real exchange server and upstream on loopback.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/app.js';
import { startExchangeParts, type ExchangeParts } from '../helpers/exchange-rig.js';
import { fileGateway } from '../helpers/file-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import type { IdentityUpstream } from '../helpers/identity-upstream.js';
import { MODERN_VERSION, modernPost } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const NARROW = 'tickets:read';
const BROAD = 'tickets:read tickets:write';

describe('a reload that adds a token-exchange upstream to an endpoint', () => {
  let parts: ExchangeParts;
  let key: TestKey;
  let upstream: IdentityUpstream;
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: (() => Promise<void>) | undefined;

  /** `tickets`: whether the config has the token-exchange upstream at all (without it, no verified token is kept). */
  const doc = (endpointUpstreams: string[], tickets = true): Record<string, unknown> => ({
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: parts.jwks.url },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [
      { name: 'plain', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' },
      ...(tickets
        ? [parts.tickets()]
        : []),
    ],
    endpoints: [{ path: '/mcp', prefix: 'always', upstreams: endpointUpstreams }],
  });

  before(async () => {
    parts = await startExchangeParts();
    ({ key, upstream } = parts);
    ({ app, gw, write, close } = await fileGateway('swb-exchange-reload-', doc(['plain'])));
  });
  after(async () => {
    await close?.();
    await parts?.close();
  });

  const call = async (token: string, name: string, label: string) => {
    const a = await modernPost(gw.url(), 'tools/call', { name, arguments: { claimed: 'alice' } }, { token });
    assert.equal(a.status, 200, `${label}: ${JSON.stringify(a.body)}`);
    assert.equal(a.body.error, undefined, `${label}: ${JSON.stringify(a.body)}`);
    return a.body.result?.content?.[0]?.text as string;
  };
  const whoami = async (token: string, label: string) => {
    assert.equal(await call(token, 'tickets__whoami', label), 'alice', label);
    return upstream.seen.at(-1)!.subjectScope;
  };

  /** The bearer tokens the gateway found in its cache so far (switchboard_auth_tokens_total{check="cached"}). */
  const cachedLookups = async () => (await app.metrics.authTokens.get()).values.find((v) => v.labels.check === 'cached')?.value ?? 0;

  /**
   * A modern tools/call whose headers go now (the gateway verifies its token) and whose body goes when
   * `send` is called; `answer` is its tool's text.
   */
  const held = (token: string, name: string, claimed: string) => {
    const body = JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name, arguments: { claimed }, _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION, 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'held', version: '1' } } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': name, authorization: `Bearer ${token}`, 'content-length': String(Buffer.byteLength(body)) };
    const req = request(gw.url(), { method: 'POST', headers });
    const answer = new Promise<string>((resolve, reject) => {
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => {
          const last = text.includes('data: ') ? text.split('\n').filter((l) => l.startsWith('data: ')).at(-1)!.slice(6) : text;
          const msg = JSON.parse(last);
          if (msg.error) reject(Object.assign(new Error(JSON.stringify(msg.error)), { status: res.statusCode }));
          else resolve(msg.result?.content?.[0]?.text);
        });
      });
    });
    req.flushHeaders();
    return { send: () => req.end(body), answer };
  };

  it("serves each request after it with its own token's exchange, the standings made before it too", async () => {
    const narrow = await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 });
    const broad = await signToken(key, { sub: 'alice', scope: BROAD, expIn: 600 });
    // Both tokens have a standing before the reload (one, shared: no upstream exchanged tokens then).
    assert.match(await call(narrow, 'plain__label', 'narrow before'), /^v1 /);
    assert.match(await call(broad, 'plain__label', 'broad before'), /^v1 /);
    write(doc(['plain', 'tickets']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    assert.equal(await whoami(narrow, 'narrow after'), NARROW);
    assert.equal(await whoami(broad, 'broad after'), BROAD, "the broad request was served with the narrow token's exchange");
    assert.equal(await whoami(narrow, 'narrow again'), NARROW, "the narrow request was served with the broad token's exchange");
    assert.match(await call(narrow, 'plain__label', 'the other upstream still answers'), /^v1 /);
    assert.equal(upstream.crossed, 0);
    assert.deepEqual(upstream.rejected, []);
  });

  it("serves a request whose token was verified before it, its body after, with that token's exchange", async () => {
    write(doc(['plain']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    const narrow = await signToken(key, { sub: 'bob', scope: NARROW, expIn: 600 });
    const broad = await signToken(key, { sub: 'bob', scope: BROAD, expIn: 600 });
    // Each token verified and in the cache; one standing for both (no upstream of the endpoint exchanges tokens).
    assert.match(await call(narrow, 'plain__label', 'narrow before'), /^v1 /);
    assert.match(await call(broad, 'plain__label', 'broad before'), /^v1 /);
    // Two requests whose tokens the gateway has looked up (in the cache: the principals of the calls above).
    const looked = await cachedLookups();
    const first = held(narrow, 'tickets__whoami', 'bob');
    const second = held(broad, 'tickets__whoami', 'bob');
    while ((await cachedLookups()) < looked + 2) await new Promise((r) => setImmediate(r));
    write(doc(['plain', 'tickets']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    first.send();
    assert.equal(await first.answer, 'bob');
    assert.equal(upstream.seen.at(-1)!.subjectScope, NARROW);
    second.send();
    assert.equal(await second.answer, 'bob');
    assert.equal(upstream.seen.at(-1)!.subjectScope, BROAD, "the broad request was served with the narrow token's exchange");
    assert.equal(upstream.crossed, 0);
    assert.deepEqual(upstream.rejected, []);
  });

  it("tells a request whose token was verified before the reload that added the config's first token-exchange upstream to send it again, which is served", async () => {
    write(doc(['plain'], false));
    assert.equal((await app.reload('test')).report.result, 'applied');
    const narrow = await signToken(key, { sub: 'carol', scope: NARROW, expIn: 600 });
    assert.match(await call(narrow, 'plain__label', 'before'), /^v1 /);
    const looked = await cachedLookups();
    const first = held(narrow, 'tickets__whoami', 'carol');
    while ((await cachedLookups()) < looked + 1) await new Promise((r) => setImmediate(r));
    // No upstream exchanged tokens when it was verified: its token was not kept.
    write(doc(['plain', 'tickets']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    first.send();
    const refused = await first.answer.then((text) => assert.fail(`served: ${text}`), (err: Error & { status: number }) => ({ ...JSON.parse(err.message), status: err.status }));
    assert.equal(refused.status, 200, 'an answer of its own (a JSON-RPC error), as every call refused upstream');
    assert.equal(refused.data?.code, 'SWB_UPSTREAM_CREDENTIAL_REFUSED', JSON.stringify(refused));
    assert.equal(refused.data?.reason, 'no_subject_token', JSON.stringify(refused));
    assert.match(refused.message, /verified before a configuration reload/, JSON.stringify(refused));
    assert.match(refused.message, /send the request again/, JSON.stringify(refused));
    // Its token has not expired: a fresh one is not what it needs.
    assert.doesNotMatch(refused.message, /expired|fresh token/, JSON.stringify(refused));
    // Sent again with the same token, it is served with that token's exchange.
    const again = await modernPost(gw.url(), 'tools/call', { name: 'tickets__whoami', arguments: { claimed: 'carol' } }, { token: narrow });
    assert.equal(again.body.result?.content?.[0]?.text, 'carol', JSON.stringify(again.body));
    assert.equal(upstream.seen.at(-1)!.subjectScope, NARROW);
    assert.equal(upstream.crossed, 0);
  });

  it("starts no instance of the new upstream for a subject's standing left from before it, which no request uses", async () => {
    // Without the upstream first, and no standing of the tests above: the pool the reload makes holds only
    // what that reload started, for the one standing there is.
    write(doc(['plain'], false));
    assert.equal((await app.reload('test')).report.result, 'applied');
    for (const s of app.gateway.modern.sessions.list()) await app.gateway.modern.sessions.end(s.id);
    const token = await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 });
    assert.match(await call(token, 'plain__label', 'before'), /^v1 /);
    write(doc(['plain', 'tickets']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    // The reload has rebound every standing (the shared one included) before it answered.
    const tickets = app.gateway.pools.get('tickets')!;
    assert.equal(tickets.instances.size, 0, "an instance was started for the subject's shared standing (it can exchange no token, and idles out)");
    // The request after it is its token's own standing's, which has its instance.
    assert.equal(await whoami(token, 'after'), NARROW);
    assert.equal(tickets.instances.size, 1);
  });
});
