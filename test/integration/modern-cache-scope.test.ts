// cacheScope on 2026-07-28 results says whether an intermediary may give one caller's answer to another.
// "public" only where every caller sees the same thing: no tenant rule, no pinning, and an endpoint whose
// upstreams all serve every caller from shared instances. An instance of one user, tenant or session
// (per-user credentials above all) answers for that caller only (found by a review: it was "public").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { modernPost } from '../helpers/modern-http.js';

describe('cacheScope of 2026-07-28 results by the upstreams that answer them', () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startGateway({
      pinning: { mode: 'off' },
      upstreams: [
        { name: 'everyone', transport: 'stdio', ...FIXTURE, sharing: 'shared', pool: { size: 1 } },
        { name: 'mine', transport: 'stdio', ...FIXTURE, sharing: 'per-session', pool: { warm: 0, max: 4 } },
        { name: 'ours', transport: 'stdio', ...FIXTURE, sharing: 'per-tenant' },
      ],
      endpoints: [
        { path: '/shared', upstreams: ['everyone'] },
        { path: '/session', upstreams: ['mine'] },
        { path: '/tenant', upstreams: ['ours'] },
        { path: '/mixed', upstreams: ['everyone', 'mine'] },
      ],
    });
  });
  after(() => gw.close());

  for (const [path, scope] of [
    ['/shared', 'public'],
    ['/session', 'private'],
    ['/tenant', 'private'],
    ['/mixed', 'private'],
  ] as const) {
    it(`${path}: ${scope}`, async () => {
      for (const [method, params] of [
        ['tools/list', {}],
        ['resources/list', {}],
      ] as const) {
        const r = await modernPost(gw.url(path), method, params);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.result.cacheScope, scope, `${method}: ${JSON.stringify(r.body.result).slice(0, 200)}`);
      }
    });
  }
});
