import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/index.js';
import { diffConfig, sameValue } from '../../../src/config/config-diff.js';

type Doc = Record<string, any>;

function base(): Doc {
  return {
    tenants: [
      { name: 'anonymous', endpoints: ['*'] },
      { name: 'acme', endpoints: ['/mcp'], limits: { requestsPerSecond: 5 } },
    ],
    upstreams: [
      { name: 'keep', transport: 'stdio', command: 'node', args: ['keep.js'], sandbox: 'none' },
      { name: 'alter', transport: 'stdio', command: 'node', args: ['alter.js'], sandbox: 'none' },
      { name: 'drop', transport: 'stdio', command: 'node', args: ['drop.js'], sandbox: 'none' },
    ],
    endpoints: [
      { path: '/mcp', upstreams: ['keep'] },
      { path: '/two', upstreams: ['alter', 'drop'] },
    ],
  };
}

const parse = (d: Doc) => parseConfig(structuredClone(d), 'test', {}, '/tmp');

function edited(edit: (d: Doc) => void): Doc {
  const d = base();
  edit(d);
  return d;
}

describe('config diff: what a reload changes', () => {
  it('the same file twice is an empty diff', () => {
    const d = diffConfig(parse(base()), parse(base()));
    assert.equal(d.empty, true);
    assert.deepEqual(d.upstreams, { added: [], removed: [], changed: [], unchanged: ['keep', 'alter', 'drop'] });
    assert.deepEqual(d.restartRequired, []);
  });

  it('upstreams added, removed, changed and unchanged; endpoints using a replaced upstream count as changed', () => {
    const next = edited((d) => {
      d.upstreams[1].args = ['alter.js', '--v2'];
      d.upstreams.splice(2, 1);
      d.upstreams.push({ name: 'fresh', transport: 'stdio', command: 'node', args: ['fresh.js'], sandbox: 'none' });
      d.endpoints[1].upstreams = ['alter', 'fresh'];
    });
    const d = diffConfig(parse(base()), parse(next));
    assert.deepEqual(d.upstreams, { added: ['fresh'], removed: ['drop'], changed: ['alter'], unchanged: ['keep'] });
    assert.deepEqual(d.endpoints, { added: [], removed: [], changed: ['/two'], unchanged: ['/mcp'] });
    assert.equal(d.empty, false);
  });

  it('a replaced upstream changes the endpoints that expose it even when their own settings did not', () => {
    const d = diffConfig(parse(base()), parse(edited((x) => (x.upstreams[2].env = { V: '2' }))));
    assert.deepEqual(d.upstreams.changed, ['drop']);
    assert.deepEqual(d.endpoints.changed, ['/two']);
    assert.deepEqual(d.endpoints.unchanged, ['/mcp']);
  });

  it('tenants: a changed limit, a new tenant and a removed one', () => {
    const next = edited((d) => {
      d.tenants[1].limits.requestsPerSecond = 50;
      d.tenants.push({ name: 'globex', endpoints: ['/two'] });
      d.tenants.splice(0, 1);
    });
    const d = diffConfig(parse(base()), parse(next));
    assert.deepEqual(d.tenants, { added: ['globex'], removed: ['anonymous'], changed: ['acme'], unchanged: [] });
  });

  it('a tenant now reaching a per-session upstream changes its default per-tenant share: the upstream is replaced', () => {
    const perSession = (d: Doc) => {
      d.upstreams[0].sharing = 'per-session';
      d.upstreams[0].pool = { max: 4 };
      d.tenants[1].endpoints = ['/two'];
    };
    const d = diffConfig(parse(edited(perSession)), parse(edited((x) => { perSession(x); x.tenants[1].endpoints = ['/mcp']; })));
    assert.deepEqual(d.upstreams.changed, ['keep']);
  });

  it('listener, store and other start-time settings are reported and left as they were', () => {
    const next = edited((d) => {
      d.server = { port: 9999 };
      d.metrics = { port: 9998 };
      d.store = { redis: { url: 'redis://127.0.0.1:1' } };
      d.admin = { enabled: true, port: 9997, drainGraceMs: 5, maxConnections: 8 };
      d.tracing = { enabled: true, endpoint: 'http://127.0.0.1:4318', headers: { 'x-api-key': 'k' } };
    });
    const cur = parse(base());
    const d = diffConfig(cur, parse(next));
    assert.equal(d.effective.server.port, cur.server.port);
    assert.equal(d.effective.metrics.port, cur.metrics.port);
    assert.equal(d.effective.store.redis, undefined);
    assert.equal(d.effective.admin.enabled, false);
    assert.equal(d.effective.admin.port, cur.admin.port);
    assert.equal(d.effective.admin.drainGraceMs, 5, 'the drain grace is not a start-time setting');
    assert.equal(d.effective.admin.maxConnections, cur.admin.maxConnections, "the admin listener's cap is set when it starts");
    assert.equal(d.effective.tracing.enabled, false, 'the running tracing is what the config view shows');
    assert.deepEqual(d.restartRequired.map((l) => l.split(':')[0]).sort(), ['admin.enabled', 'admin.maxConnections', 'admin.port', 'metrics', 'server', 'store', 'tracing']);
    assert.equal(d.admin, true);
  });

  it('endpoint paths follow the file: a new one is added, a removed one removed (with the upstreams only it used), nothing waits for a restart', () => {
    const next = edited((d) => {
      d.endpoints = [{ path: '/mcp', upstreams: ['keep'] }, { path: '/new', upstreams: ['keep'] }];
      d.upstreams = [d.upstreams[0]];
    });
    const d = diffConfig(parse(base()), parse(next));
    assert.deepEqual(d.effective.endpoints.map((e) => e.path), ['/mcp', '/new']);
    assert.deepEqual(d.endpoints.added, ['/new']);
    assert.deepEqual(d.endpoints.removed, ['/two']);
    assert.deepEqual(d.effective.upstreams.map((u) => u.name), ['keep']);
    assert.deepEqual(d.upstreams.removed.sort(), ['alter', 'drop']);
    assert.deepEqual(d.restartRequired, []);
  });

  it('auth: token verification settings are hot, the mode is not', () => {
    const jwt = (d: Doc) => (d.auth = { mode: 'jwt', issuer: 'https://a.test', jwksUrl: 'https://a.test/jwks' });
    const cur = parse(edited(jwt));
    const d = diffConfig(cur, parse(edited((x) => { jwt(x); x.auth.jwksUrl = 'https://a.test/keys2'; })));
    assert.equal(d.auth, true);
    assert.deepEqual(d.restartRequired, []);
    const off = diffConfig(cur, parse(base()));
    assert.equal(off.effective.auth.mode, 'jwt');
    assert.match(off.restartRequired.join('\n'), /^auth\.mode/m);
  });

  it('pinning turned on for an upstream: applied where pin checks run, left off (restart) where none were built', () => {
    const off = (d: Doc) => (d.pinning = { mode: 'off' });
    const cur = parse(edited(off));
    const next = parse(edited((x) => { off(x); x.upstreams[1].pinning = 'warn'; }));
    const built = diffConfig(cur, next, true);
    assert.deepEqual(built.restartRequired, []);
    assert.deepEqual(built.upstreams.changed, ['alter']);
    const none = diffConfig(cur, next);
    assert.match(none.restartRequired.join('\n'), /^upstreams\[1\]\.pinning: .*needs a restart/m);
    assert.deepEqual(none.upstreams.changed, []);
    assert.equal(none.effective.upstreams[1]!.pinning, undefined);
    assert.equal(none.empty, true);
  });

  it('sameValue ignores key order and undefined members, not array order', () => {
    assert.equal(sameValue({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1, c: undefined }), true);
    assert.equal(sameValue([1, 2], [2, 1]), false);
    assert.equal(sameValue({ a: { b: 1 } }, { a: { b: 2 } }), false);
  });
});
