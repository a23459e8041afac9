// A 2026-07-28 standing swept for idleness must be let go of. The verified-token cache keeps each
// token's principal for up to auth.tokenCache.maxEntries tokens, and the principal found its standing
// through a weak map from it: each swept standing (its router session, guard and logger, ~12 kB) stayed
// in memory until its token left the cache, 10,000 of them by default (a leak soak with one subject per
// request grew the heap by 12 kB a request).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';
import { ISSUER, PUBLIC_URL, makeKey, signToken } from '../helpers/tokens.js';
import { waitFor, withClockAhead } from '../helpers/wait.js';

describe('2026-07-28: a swept standing', () => {
  let gw: RunningGateway;
  let dir: string;
  let token: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-swept-'));
    const key = await makeKey('k1');
    writeFileSync(join(dir, 'key.pem'), key.spki);
    token = await signToken(key, { aud: PUBLIC_URL, kid: null, sub: 'swept', tenant: 'acme' });
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      session: { idleTimeoutMs: 1000 },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.pem')] },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not kept alive by its principal while the token is cached, and the next request opens a new one', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const standings = gw.app.gateway.modern.sessions;
    const first = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'test_simple_text', arguments: {} }, { token });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    // Held weakly only (a test's own variable would keep it alive).
    const { ref, id } = (() => {
      const [standing] = standings.list();
      assert.ok(standing);
      return { ref: new WeakRef(standing), id: standing.id };
    })();
    // Idle past idleTimeoutMs: the clock moves instead of the test waiting it out; the sweep runs on its timer.
    await withClockAhead(1050, () => waitFor(() => standings.size === 0, { timeoutMs: 4000 }));
    assert.equal(standings.size, 0, 'swept');
    // WeakRef targets stay alive until the current job ends.
    await new Promise((r) => setImmediate(r));
    gc();
    assert.equal(ref.deref(), undefined, 'the swept standing was collected (its token is still cached)');
    // The same token (the same cached principal) still finds its way: a new standing.
    const again = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'test_simple_text', arguments: {} }, { token });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(standings.size, 1);
    assert.notEqual(standings.list()[0]!.id, id);
  });
});
