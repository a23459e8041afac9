// A subject's shared 2026-07-28 standing (made while its endpoint exchanged no tokens) that a reload gives a
// token-exchange upstream: it is used by no request after the reload (each token has a standing of its own
// there), yet an open subscriptions/listen keeps it, and the reload moved it onto the new upstream. Its
// instance was exchanged from the token the standing had seen last, whichever client of the subject brought
// it: a listen opened with a narrow token was served by an upstream session made with a broader token's
// exchange. A file-configured gateway, reloaded; a real exchange server and upstream on loopback.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import type { App } from '../../src/app.js';
import { startExchangeParts, type ExchangeParts } from '../helpers/exchange-rig.js';
import { fileGateway } from '../helpers/file-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import type { IdentityUpstream } from '../helpers/identity-upstream.js';
import { modernPost, openListen } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const NARROW = 'tickets:read';
const BROAD = 'tickets:read tickets:write';

describe("a reload that gives a listening subject's shared standing a token-exchange upstream", () => {
  let parts: ExchangeParts;
  let key: TestKey;
  let upstream: IdentityUpstream;
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: (() => Promise<void>) | undefined;

  // /other exchanges tokens from the start: verified tokens are kept (only /mcp's kind changes).
  const doc = (mcpUpstreams: string[]): Record<string, unknown> => ({
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: parts.jwks.url },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [
      { name: 'plain', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' },
      parts.tickets(),
    ],
    endpoints: [
      { path: '/mcp', prefix: 'always', upstreams: mcpUpstreams },
      { path: '/other', prefix: 'always', upstreams: ['tickets'] },
    ],
  });

  before(async () => {
    parts = await startExchangeParts();
    ({ key, upstream } = parts);
    ({ app, gw, write, close } = await fileGateway('swb-exchange-listen-', doc(['plain'])));
  });
  after(async () => {
    await close?.();
    await parts?.close();
  });

  /** The user scopes the upstream's bearers were exchanged from (each bearer it was ever sent). */
  const scopesSeen = () => [...upstream.bearers].map((b) => decodeJwt(b).subject_scope);

  it("never reaches the upstream for the listen with another token's exchange; the listen is ended, to be opened again under its own token", async () => {
    const narrow = await signToken(key, { sub: 'alice', scope: NARROW, expIn: 600 });
    const broad = await signToken(key, { sub: 'alice', scope: BROAD, expIn: 600 });
    const listen = await openListen(gw.url('/mcp'), 'watch', { toolsListChanged: true }, narrow);
    assert.equal(listen.status, 200);
    assert.equal((await listen.next()).method, 'notifications/subscriptions/acknowledged');
    // Another client of alice, with the broad token, on the same (shared) standing: it has seen the broad token last.
    const a = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'plain__label', arguments: {} }, { token: broad });
    assert.equal(a.body.error, undefined, JSON.stringify(a.body));
    write(doc(['plain', 'tickets']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    // The reload rebound the standing before it answered: it started nothing for it (no token is its to exchange).
    assert.equal(app.gateway.pools.get('tickets')!.instances.size, 0, 'an instance of the new upstream was started for the shared standing');
    assert.ok(!scopesSeen().includes(BROAD), "the narrow token's listen was served by an upstream session made with the broad token's exchange");
    // The listen ends with why, and the client knows to listen again.
    let last: any;
    do last = await listen.next();
    while (last.id === undefined);
    assert.equal(last.id, 'watch');
    assert.match(String(last.error?.message), /subscriptions\/listen again/, JSON.stringify(last));
    // Opened again, it is the narrow token's own; the upstream is called with that token's exchange.
    const again = await openListen(gw.url('/mcp'), 'watch-again', { toolsListChanged: true }, narrow);
    assert.equal((await again.next()).method, 'notifications/subscriptions/acknowledged');
    const w = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'tickets__whoami', arguments: { claimed: 'alice' } }, { token: narrow });
    assert.equal(w.body.result?.content?.[0]?.text, 'alice', JSON.stringify(w.body));
    assert.equal(upstream.seen.at(-1)!.subjectScope, NARROW);
    assert.ok(!scopesSeen().includes(BROAD));
    again.close();
    assert.equal(upstream.crossed, 0);
  });
});
