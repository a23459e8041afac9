// Reloading the config of a running gateway: real stdio upstreams (label-server.mjs tells versions and
// processes apart), the official SDK client, the app built from a file as `serve` builds it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { buildApp, type App } from '../../src/app.js';
import { checkConfigFile } from '../../src/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { alive } from '../helpers/processes.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { fileGateway } from '../helpers/file-gateway.js';
import { ISSUER, makeKey } from '../helpers/tokens.js';
import { modernPost } from '../helpers/modern-http.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');

type Doc = Record<string, any>;

function upstream(name: string, label: string, extra: Record<string, unknown> = {}) {
  return { name, transport: 'stdio', command: process.execPath, args: [LABEL, '--label', label], sandbox: 'none', ...extra };
}

function baseDoc(): Doc {
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { drainGraceMs: 5000 },
    // The label is in a tool's description: pinning would withhold every new version (the admin suite covers that).
    pinning: { mode: 'off' },
    tenants: [{ name: 'anonymous', endpoints: ['*'] }],
    upstreams: [upstream('steady', 'v1'), upstream('alter', 'v1'), upstream('solo', 'v1', { sharing: 'per-session', pool: { warm: 1, max: 4 } })],
    endpoints: [
      { path: '/mcp', upstreams: ['steady'] },
      { path: '/two', upstreams: ['alter', 'solo'] },
    ],
  };
}

async function counter(app: App, result: string): Promise<number> {
  const m = await app.metrics.configReloads.get();
  return m.values.find((v) => v.labels.result === result)?.value ?? 0;
}

const pidOf = (text: string) => Number(text.split(' ')[1]);

describe('config reload', () => {
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Doc) => void;
  let close: () => Promise<void>;
  const clients: Client[] = [];

  const connect = async (path: string) => {
    const c = await connectClient(gw, 'streamable-http', { path });
    clients.push(c);
    return c;
  };
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => textOf(await c.callTool({ name, arguments: args }));

  before(async () => {
    ({ app, gw, write, close } = await fileGateway('swb-reload-', baseDoc()));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await close();
  });

  it('an invalid file changes nothing, and the answer names every problem with its path', async () => {
    const client = await connect('/mcp');
    const before = await call(client, 'label');
    const pools = new Map(app.gateway.pools);
    const config = app.gateway.config;
    const bad = baseDoc();
    bad.upstreams[1].comand = 'typo';
    bad.endpoints[1].upstreams = ['alter', 'nowhere'];
    write(bad);
    const { report } = await app.reload('test');
    assert.equal(report.result, 'invalid');
    assert.ok(report.problems.some((p) => p.startsWith('upstreams[1].comand')), report.problems.join('\n'));
    assert.ok(report.problems.some((p) => p.startsWith('endpoints[1].upstreams[1]')), report.problems.join('\n'));
    assert.equal(app.gateway.config, config, 'the config in force is the same object');
    assert.deepEqual([...app.gateway.pools], [...pools], 'the same pools');
    assert.equal(await counter(app, 'invalid'), 1);
    assert.equal(await call(client, 'label'), before, 'the same process answers');
  });

  it('a replaced upstream: calls in flight finish on the old process, the same session then reaches the new one; the unchanged upstream keeps its process', async () => {
    write(baseDoc());
    const steadyClient = await connect('/mcp');
    const twoClient = await connect('/two');
    const steadyBefore = await call(steadyClient, 'label');
    const oldAlter = await call(twoClient, 'alter__label');
    assert.match(oldAlter, /^v1 /);
    const inFlight = call(twoClient, 'alter__sleep', { ms: 1500 });
    await until('the slow call reached the upstream', () => app.gateway.pools.get('alter')!.inflight === 1);
    const next = baseDoc();
    next.upstreams[1] = upstream('alter', 'v2');
    write(next);
    const { report, drained } = await app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.deepEqual(report.changes!.upstreams.changed, ['alter']);
    assert.deepEqual(report.changes!.endpoints.changed, ['/two']);
    assert.deepEqual(report.changes!.endpoints.unchanged, ['/mcp']);
    assert.match(await call(twoClient, 'alter__label'), /^v2 /, 'the same session reaches the new upstream at once');
    assert.equal(await inFlight, 'slept 1500 ms in v1', 'the call in flight finished on the old process');
    const d = await drained;
    assert.deepEqual(d.upstreams.map((u) => [u.name, u.cutCalls]), [['alter', 0]]);
    assert.equal(alive(pidOf(oldAlter)), false, 'the old process is stopped');
    assert.equal(await call(steadyClient, 'label'), steadyBefore, 'the unchanged upstream: same process, same session');
  });

  it('an upstream added to an endpoint: its sessions are told to re-list and see its tools', async () => {
    const client = await connect('/two');
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    const next = baseDoc();
    next.upstreams[1] = upstream('alter', 'v2');
    next.upstreams.push(upstream('fresh', 'v1'));
    next.endpoints[1].upstreams = ['alter', 'solo', 'fresh'];
    write(next);
    const { report } = await app.reload('test');
    assert.deepEqual(report.changes!.upstreams.added, ['fresh']);
    await until('tools/list_changed', () => changed > 0);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('fresh__label'), names.join(', '));
    assert.match(await call(client, 'fresh__label'), /^v1 /);
    assert.match(await call(client, 'solo__label'), /^v1 /, 'the per-session upstream it held is still its own');
  });

  it('a removed per-session upstream is drained and its processes stopped; start-time settings are reported, not applied', async () => {
    const client = await connect('/two');
    const soloPid = pidOf(await call(client, 'solo__label'));
    const next = baseDoc();
    next.upstreams = [next.upstreams[0], upstream('alter', 'v2'), upstream('fresh', 'v1')];
    next.endpoints[1].upstreams = ['alter', 'fresh'];
    next.server.port = 1;
    write(next);
    const { report, drained } = await app.reload('test');
    assert.equal(report.result, 'applied');
    assert.deepEqual(report.changes!.upstreams.removed, ['solo']);
    assert.ok(report.restartRequired.some((r) => r.startsWith('server:')), report.restartRequired.join('\n'));
    assert.equal(app.gateway.config.server.port, 0, 'the listener setting is left as it was');
    await drained;
    assert.equal(alive(soloPid), false, 'its process is stopped');
    assert.equal(app.gateway.pools.has('solo'), false);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!names.some((n) => n.startsWith('solo__')), names.join(', '));
  });

  it('a tenant that loses an endpoint: its sessions there end; the same file again changes nothing', async () => {
    const client = await connect('/two');
    assert.match(await call(client, 'alter__label'), /^v2 /);
    const next = baseDoc();
    next.upstreams = [next.upstreams[0], upstream('alter', 'v2'), upstream('fresh', 'v1')];
    next.endpoints[1].upstreams = ['alter', 'fresh'];
    next.tenants[0].endpoints = ['/mcp'];
    write(next);
    const { report } = await app.reload('test');
    assert.equal(report.result, 'applied');
    assert.deepEqual(report.changes!.tenants.changed, ['anonymous']);
    assert.ok(report.sessionsEnded >= 1);
    await assert.rejects(call(client, 'alter__label'));
    const again = await app.reload('test');
    assert.equal(again.report.result, 'unchanged');
    assert.equal(await counter(app, 'unchanged'), 1);
  });
});

describe('config reload: endpoints added, removed and moved without a restart', () => {
  let app: App;
  let gw: RunningGateway;
  let write: (doc: Doc) => void;
  let close: () => Promise<void>;
  const clients: Client[] = [];
  const doc = (edit: (d: Doc) => void = () => {}) => {
    const d = baseDoc();
    d.upstreams = [upstream('steady', 'v1'), upstream('later', 'v1')];
    d.endpoints = [{ path: '/mcp', upstreams: ['steady'] }];
    edit(d);
    return d;
  };
  const connect = async (kind: 'streamable-http' | 'sse', path: string) => {
    const c = await connectClient(gw, kind, { path });
    clients.push(c);
    return c;
  };
  const label = async (c: Client) => textOf(await c.callTool({ name: 'label', arguments: {} }));
  const post = (path: string, body: unknown) =>
    fetch(gw.url(path), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

  before(async () => {
    ({ app, gw, write, close } = await fileGateway('swb-endpoints-', doc()));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await close();
  });

  it('a new endpoint is served at once over Streamable HTTP, HTTP+SSE and 2026-07-28, its upstream started; nothing waits for a restart', async () => {
    assert.equal((await post('/new', initialize)).status, 404, 'control: not served before');
    const steady = await connect('streamable-http', '/mcp');
    const before = await label(steady);
    write(doc((d) => d.endpoints.push({ path: '/new', upstreams: ['later'] })));
    const { report } = await app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.deepEqual(report.changes!.endpoints.added, ['/new']);
    assert.deepEqual(report.restartRequired, []);
    assert.match(await label(await connect('streamable-http', '/new')), /^v1 /);
    assert.match(await label(await connect('sse', '/new')), /^v1 /);
    const modern = await modernPost(gw.url('/new'), 'tools/call', { name: 'label', arguments: {} });
    assert.equal(modern.status, 200, JSON.stringify(modern.body));
    assert.match(modern.body.result.content[0].text, /^v1 /);
    assert.equal(await label(steady), before, 'the other endpoint: same session, same process');
  });

  it("a legacy SSE path moved: the endpoint's SSE sessions end (their message URL is gone), new streams open on the new path", async () => {
    const old = await connect('sse', '/new');
    assert.match(await label(old), /^v1 /);
    const streamable = await connect('streamable-http', '/new');
    write(doc((d) => d.endpoints.push({ path: '/new', upstreams: ['later'], ssePath: '/new/events/sse' })));
    const { report } = await app.reload('test');
    assert.equal(report.result, 'applied', JSON.stringify(report));
    assert.deepEqual(report.changes!.endpoints.changed, ['/new']);
    assert.ok(report.sessionsEnded >= 1, JSON.stringify(report));
    await assert.rejects(label(old));
    assert.equal((await fetch(gw.url('/new/sse'))).status, 404, 'the old SSE path is no longer served');
    const moved = new SdkClient({ name: 'moved', version: '1' });
    await moved.connect(new SSEClientTransport(gw.url('/new/events/sse')));
    clients.push(moved);
    assert.match(await label(moved), /^v1 /);
    assert.match(await label(streamable), /^v1 /, 'Streamable HTTP sessions are untouched');
  });

  it('a removed endpoint: its sessions end and its paths answer 404; the others carry on', async () => {
    const gone = await connect('streamable-http', '/new');
    assert.match(await label(gone), /^v1 /);
    const steady = await connect('streamable-http', '/mcp');
    const before = await label(steady);
    write(doc());
    const { report } = await app.reload('test');
    assert.deepEqual(report.changes!.endpoints.removed, ['/new']);
    assert.deepEqual(report.restartRequired, []);
    assert.ok(report.sessionsEnded >= 1, JSON.stringify(report));
    await assert.rejects(label(gone));
    assert.equal((await post('/new', initialize)).status, 404);
    assert.equal((await fetch(gw.url('/new/events/sse'))).status, 404);
    assert.equal(app.gateway.routers.length, 1);
    assert.equal(await label(steady), before);
  });
});

/**
 * Runs `body` against a gateway built from a config file of its own that it watches (admin.watchConfig),
 * not yet listening; the gateway is closed and the file's folder removed after.
 */
async function watchingGateway(body: (w: { app: Awaited<ReturnType<typeof buildApp>>; file: string; doc: ReturnType<typeof baseDoc> }) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'swb-watch-'));
  const file = join(dir, 'switchboard.yaml');
  const doc = baseDoc();
  doc.admin.watchConfig = true;
  writeFileSync(file, JSON.stringify(doc));
  const app = await buildApp(checkConfigFile(file).config, { configFile: file, logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
  try {
    await body({ app, file, doc });
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('config reload: admin.watchConfig', () => {
  it('a change of the file content reloads it; a write of the same content does not', async () => {
    await watchingGateway(async ({ app, file, doc }) => {
      await app.listen();
      writeFileSync(file, JSON.stringify(doc));
      doc.tenants.push({ name: 'late', endpoints: ['/mcp'] });
      writeFileSync(file, JSON.stringify(doc));
      await until('the watch reloaded the file', async () => (await counter(app, 'applied')) === 1);
      assert.deepEqual(app.gateway.policy.tenants().map((t) => t.name), ['anonymous', 'late']);
      assert.equal(await counter(app, 'unchanged'), 0, 'rewriting the same content is not a change');
    });
  });

  it('an edit made while the gateway starts (after the file was read, before the watch began) is loaded once it listens (found by a review)', async () => {
    await watchingGateway(async ({ app, file, doc }) => {
      // Upstreams starting take their time: a ConfigMap update or an editor may land meanwhile.
      doc.tenants.push({ name: 'during-start', endpoints: ['/mcp'] });
      writeFileSync(file, JSON.stringify(doc));
      await app.listen();
      await until('the watch loaded the edit made during the start', async () => (await counter(app, 'applied')) === 1);
      assert.deepEqual(app.gateway.policy.tenants().map((t) => t.name), ['anonymous', 'during-start']);
    });
  });

  it('its directory removed and made again (a remount): the watch says it is down, comes back, and applies the file (found by a review)', async () => {
    await watchingGateway(async ({ app, file, doc }) => {
      await app.listen();
      const up = async () => (await app.metrics.configWatchUp.get()).values[0]?.value;
      assert.equal(await up(), 1);
      rmSync(dirname(file), { recursive: true });
      await until('the watch reported down', async () => (await up()) === 0);
      mkdirSync(dirname(file));
      doc.tenants.push({ name: 'after-remount', endpoints: ['/mcp'] });
      writeFileSync(file, JSON.stringify(doc));
      await until('the watch came back and applied the file', async () => (await counter(app, 'applied')) === 1 && (await up()) === 1);
      assert.deepEqual(app.gateway.policy.tenants().map((t) => t.name), ['anonymous', 'after-remount']);
    });
  });

  it("a Kubernetes ConfigMap update (the kubelet's atomic swap of the ..data link in a directory mount) reloads it", async () => {
    // The layout the kubelet writes for a ConfigMap volume: config.yaml -> ..data/config.yaml, ..data -> a
    // timestamped directory; an update writes a new directory and renames a fresh link over ..data.
    const dir = mkdtempSync(join(tmpdir(), 'swb-configmap-'));
    const version = (n: number, text: string) => {
      const d = join(dir, `..2026_12_02_00_00_0${n}.${n}`);
      mkdirSync(d);
      writeFileSync(join(d, 'config.yaml'), text);
      return d;
    };
    const doc = baseDoc();
    doc.admin.watchConfig = true;
    const first = version(1, JSON.stringify(doc));
    symlinkSync(basename(first), join(dir, '..data'));
    symlinkSync(join('..data', 'config.yaml'), join(dir, 'config.yaml'));
    const file = join(dir, 'config.yaml');
    const app = await buildApp(checkConfigFile(file).config, { configFile: file, logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
    try {
      await app.listen();
      doc.tenants.push({ name: 'from-configmap', endpoints: ['/mcp'] });
      const second = version(2, JSON.stringify(doc));
      symlinkSync(basename(second), join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      rmSync(first, { recursive: true });
      await until('the watch reloaded the swapped file', async () => (await counter(app, 'applied')) === 1);
      assert.deepEqual(app.gateway.policy.tenants().map((t) => t.name), ['anonymous', 'from-configmap']);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('config reload of a remote upstream with a credential', () => {
  // A token endpoint and a minimal Streamable HTTP MCP server on one loopback port: /token/<name>
  // issues `token-<name>`, /mcp/<name> answers as an MCP server whose one tool says which path and
  // which bearer it was called with.
  let server: Server;
  let base: string;
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const json = (status: number, doc: unknown) => (res.writeHead(status, { 'content-type': 'application/json' }), res.end(JSON.stringify(doc)));
        if (req.url!.startsWith('/token/')) return json(200, { access_token: `token-${req.url!.slice(7)}`, token_type: 'Bearer', expires_in: 3600 });
        if (req.method !== 'POST') return (res.writeHead(405), res.end());
        const m = JSON.parse(body);
        if (m.id === undefined) return (res.writeHead(202), res.end());
        if (m.method === 'initialize') return json(200, { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'where', version: '1' } } });
        if (m.method === 'tools/list') return json(200, { jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'where', inputSchema: { type: 'object' } }] } });
        if (m.method === 'tools/call') return json(200, { jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `${req.url} ${req.headers.authorization ?? 'no bearer'}` }] } });
        json(200, { jsonrpc: '2.0', id: m.id, result: {} });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('a reload that moves the upstream to another server and credential sends the new one its own token, never the old', async () => {
    const remote = (name: string, withAuth: boolean) => ({
      name: 'where',
      transport: 'streamable-http',
      url: `${base}/mcp/${name}`,
      ...(withAuth ? { auth: { type: 'client-credentials', tokenUrl: `${base}/token/${name}`, clientId: name, clientSecret: `secret-${name}` } } : {}),
    });
    const doc = { ...baseDoc(), upstreams: [remote('a', true)], endpoints: [{ path: '/mcp', upstreams: ['where'] }] };
    const g = await fileGateway('swb-reload-remote-', doc);
    try {
      const seen: string[] = [];
      for (const [name, withAuth] of [['a', true], ['b', true], ['c', false]] as const) {
        if (name !== 'a') {
          g.write({ ...doc, upstreams: [remote(name, withAuth)] });
          assert.equal((await g.app.reload('test')).report.result, 'applied');
        }
        const client = await connectClient(g.gw, 'streamable-http');
        seen.push(textOf(await client.callTool({ name: 'where', arguments: {} })));
        await client.close();
      }
      assert.deepEqual(seen, ['/mcp/a Bearer token-a', '/mcp/b Bearer token-b', '/mcp/c no bearer']);
    } finally {
      await g.close();
    }
  });
});

describe('an upstream restart queued behind the reload that removes the upstream (found by a review)', () => {
  it('finds no upstream to restart: no TypeError, no failed reload, the removal stands', async () => {
    const doc = (...names: string[]) => ({
      ...baseDoc(),
      upstreams: names.map((n) => upstream(n, 'v1')),
      endpoints: names.map((n) => ({ path: `/${n}`, upstreams: [n] })),
    });
    const fg = await fileGateway('swb-restart-removed-', doc('steady', 'doomed'));
    try {
      fg.write(doc('steady'));
      // The restart was asked for while "doomed" was still there; its turn comes after the reload.
      const reload = fg.app.reload('test');
      const restart = fg.app.reloader.restartUpstream('doomed');
      assert.equal((await reload).report.result, 'applied');
      const restarted = await restart;
      assert.equal(restarted, undefined, `no restart of an upstream that is gone: ${JSON.stringify(restarted?.report)}`);
      assert.equal(await counter(fg.app, 'failed'), 0);
      assert.deepEqual([...fg.app.gateway.pools.keys()], ['steady']);
      assert.deepEqual(fg.app.gateway.config.upstreams.map((u) => u.name), ['steady']);
      // Asked once it is gone, likewise.
      assert.equal(await fg.app.reloader.restartUpstream('doomed'), undefined);
    } finally {
      await fg.close();
    }
  });
});

describe('an upstream restart that cannot be applied', () => {
  it('changes nothing: the old pool keeps serving and is the one listed, no fresh pool is left running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-restart-keys-'));
    const keyFile = join(dir, 'issuer.pem');
    writeFileSync(keyFile, (await makeKey('k1')).spki);
    const gw = await startGateway({
      auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile] },
      tenants: [{ name: 't', endpoints: ['/mcp'] }],
      upstreams: [{ ...upstream('u', 'v1'), sharing: 'shared', pool: { size: 1 } } as never],
      endpoints: [{ path: '/mcp', upstreams: ['u'] }],
    });
    try {
      const g = gw.app.gateway;
      const before = g.pools.get('u')!;
      await until('the upstream is up', () => [...before.instances].some((i) => i.state === 'ready'));
      const pools = new Set<unknown>();
      const newPool = g.newPool.bind(g);
      g.newPool = (...args: Parameters<typeof g.newPool>) => {
        const p = newPool(...args);
        pools.add(p);
        return p;
      };
      rmSync(keyFile); // the key file is gone since the start: verification cannot be rebuilt
      const { report } = (await gw.app.reloader.restartUpstream('u'))!;
      assert.equal(report.result, 'failed');
      assert.equal(g.pools.get('u'), before, 'the listed pool was replaced by one no endpoint uses');
      assert.equal(g.routers[0]!.pools[0], before);
      for (const p of pools as Set<typeof before>) assert.equal([...p.instances].filter((i) => i.state !== 'stopped').length, 0, 'a fresh pool was left running');
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
