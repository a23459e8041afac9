// A session being opened while a reload removes its endpoint: the tenant's session slot is asked of the
// store (a round trip to Redis) between the endpoint lookup and the session's registration, and a reload
// can run in that gap. The reload ends the sessions it finds registered on the endpoint it removes; the
// one still opening must not outlive the endpoint either.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../src/app.js';
import { ANONYMOUS } from '../../src/auth/index.js';
import type { SlotAnswer } from '../../src/policy/session-slots.js';
import { fileGateway } from '../helpers/file-gateway.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

function doc(paths: string[], eras: Record<string, string[]> = {}): Record<string, unknown> {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { sessions: 10 } }],
    upstreams: [{ name: 'steady', transport: 'stdio', command: process.execPath, args: [LABEL, '--label', 'v1'], sandbox: 'none' }],
    endpoints: paths.map((path) => ({ path, upstreams: ['steady'], ...(eras[path] ? { eras: eras[path] } : {}) })),
  };
}

/** Holds the store's answer for the next session slot asked (as a slow Redis round trip would): returns when it was asked, and the release. */
function holdNextSlot(app: App): { asked: () => boolean; release: () => void } {
  const slots = app.gateway.policy.slots;
  const open = slots.open.bind(slots);
  let asked = false;
  let answer: (() => void) | undefined;
  slots.open = (...args: Parameters<typeof open>) => {
    asked = true;
    slots.open = open;
    return new Promise<SlotAnswer>((resolve) => (answer = () => resolve(open(...args))));
  };
  return { asked: () => asked, release: () => answer!() };
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

describe('a session opening on an endpoint that a reload removes meanwhile', () => {
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Record<string, unknown>) => void;
  let close: () => Promise<void>;

  before(async () => {
    ({ app, gw, write, close } = await fileGateway('swb-reload-opening-', doc(['/mcp', '/gone'])));
  });
  after(async () => close());

  it('is refused with 404, as a request arriving after the reload is, and holds no session there', async () => {
    // The store's answer for the slot is held until the reload is done (as a slow Redis round trip would be).
    const slots = app.gateway.policy.slots;
    const open = slots.open.bind(slots);
    let asked = false;
    let answer: (() => void) | undefined;
    slots.open = (...args: Parameters<typeof open>) => {
      asked = true;
      slots.open = open;
      return new Promise<SlotAnswer>((resolve) => (answer = () => resolve(open(...args))));
    };
    const response = fetch(gw.url('/gone'), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INITIALIZE) });
    await until('the session slot is asked for', () => asked);
    write(doc(['/mcp']));
    const { report } = await app.reload('test');
    assert.equal(report.result, 'applied');
    assert.deepEqual(report.changes!.endpoints.removed, ['/gone']);
    answer!();
    const res = await response;
    await res.body?.cancel();
    assert.equal(res.status, 404, 'the endpoint is gone');
    const left = app.gateway.registry.list().filter(({ session }) => session.endpoint.config.path === '/gone');
    assert.equal(left.length, 0, 'no session lives on the removed endpoint');
    assert.equal((await fetch(gw.url('/gone'), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INITIALIZE) })).status, 404);
  });

  it('a 2026-07-28 request whose endpoint the edge found before a reload removed it (its body still arriving) opens no standing there', async () => {
    write(doc(['/mcp', '/later']));
    assert.equal((await app.reload('test')).report.result, 'applied');
    const found = app.gateway.routers.find((r) => r.config.path === '/later')!;
    write(doc(['/mcp']));
    assert.deepEqual((await app.reload('test')).report.changes!.endpoints.removed, ['/later']);
    assert.throws(() => app.gateway.modern.sessions.for(found, ANONYMOUS), (err: Error & { code?: string }) => err.code === 'SWB_SESSION_CLOSED' && /removed by a config reload/.test(err.message));
    assert.equal(app.gateway.modern.sessions.list().filter((s) => s.endpoint === found).length, 0);
  });

  it('a 2025 session opening on an endpoint whose 2025 era a reload switches off meanwhile is refused, and holds no session there', async () => {
    write(doc(['/mcp', '/dual'], { '/dual': ['legacy', 'modern'] }));
    assert.equal((await app.reload('test')).report.result, 'applied');
    const held = holdNextSlot(app);
    const response = fetch(gw.url('/dual'), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INITIALIZE) });
    await until('the session slot is asked for', held.asked);
    write(doc(['/mcp', '/dual'], { '/dual': ['modern'] }));
    assert.deepEqual((await app.reload('test')).report.changes!.endpoints.changed, ['/dual']);
    held.release();
    const res = await response;
    await res.body?.cancel();
    assert.notEqual(res.status, 200, 'no 2025 session is opened on an endpoint that no longer serves 2025');
    assert.equal(app.gateway.registry.list().filter(({ session }) => session.endpoint.config.path === '/dual').length, 0);
  });
});
