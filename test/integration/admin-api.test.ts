// The admin API on its own listener: authentication on every route, the OpenAPI document held to the
// routes and the answers, redaction, and the operator flows (sessions, upstreams, pins, tenants, reload)
// against a gateway with real stdio upstreams and the official SDK client.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { buildApp, type App } from '../../src/app.js';
import { ADMIN_ROUTES, buildAdminServer } from '../../src/admin/admin-server.js';
import { OPENAPI } from '../../src/admin/openapi.js';
import { GatewayAdmin } from '../../src/admin-target.js';
import { checkConfigFile } from '../../src/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { alive } from '../helpers/processes.js';
import { textOf } from '../helpers/sdk.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { connectWithToken, initializeBody, ISSUER, makeKey, mcpRequest, PUBLIC_URL, signToken, type TestKey, type TokenClient } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789-abcdefghij';
const SECRETS = {
  hmac: 'hmac-secret-never-shown-0123456789abcdef',
  state: 'request-state-key-never-shown-0123456789',
  env: 'env-value-never-shown',
  header: 'header-value-never-shown',
  client: 'client-secret-never-shown',
  urlPassword: 'url-password-never-shown',
};

type Doc = Record<string, any>;

const labelUpstream = (name: string, label: string) => ({ name, transport: 'stdio', command: process.execPath, args: [LABEL, '--label', label], sandbox: 'none', env: { API_KEY: SECRETS.env } });

function doc(keyFile: string, label: string): Doc {
  return {
    server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL },
    metrics: { enabled: false },
    logging: { level: process.env.LOG_LEVEL ?? 'silent' },
    admin: { enabled: true, port: 0, token: ADMIN_TOKEN, drainGraceMs: 2000 },
    auth: { mode: 'jwt', issuer: ISSUER, keys: [keyFile], hmacSecret: SECRETS.hmac },
    modern: { requestStateKey: SECRETS.state },
    tenants: [{ name: 'acme', endpoints: ['*'], limits: { concurrentRequests: 10 } }],
    upstreams: [
      labelUpstream('lab', label),
      // Never started (no endpoint exposes it): here for its secrets.
      {
        name: 'remote',
        transport: 'streamable-http',
        url: `https://user:${SECRETS.urlPassword}@remote.test/mcp`,
        headers: { 'x-api-key': SECRETS.header },
        auth: { type: 'client-credentials', tokenUrl: 'https://remote.test/token', clientId: 'gw', clientSecret: SECRETS.client },
      },
    ],
    endpoints: [{ path: '/mcp', upstreams: ['lab'] }],
  };
}

describe('admin API', () => {
  let dir: string;
  let file: string;
  let key: TestKey;
  let app: App;
  let gw: RunningGateway;
  let userToken: string;
  const clients: TokenClient[] = [];

  const admin = async (method: string, path: string, o: { token?: string | null; body?: unknown } = {}) => {
    const token = o.token === undefined ? ADMIN_TOKEN : o.token;
    const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(new URL(path, app.adminUrl), { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const connect = async () => {
    const c = await connectWithToken(gw, 'streamable-http', userToken);
    clients.push(c);
    return c;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-admin-'));
    key = await makeKey('k1');
    const keyFile = join(dir, 'key.json');
    writeFileSync(keyFile, JSON.stringify(key.publicJwk));
    file = join(dir, 'switchboard.yaml');
    writeFileSync(file, JSON.stringify(doc(keyFile, 'v1')));
    app = await buildApp(checkConfigFile(file).config, { configFile: file, logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
    const base = (await app.listen()).replace('localhost', '127.0.0.1');
    gw = { app, base, url: (p = '/mcp') => new URL(p, base), close: () => app.close() };
    userToken = await signToken(key, { tenant: 'acme', sub: 'alice' });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const routes = Object.entries(OPENAPI.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path: path.replace('{id}', 'x').replace('{name}', 'lab').replace('{upstream}', 'lab') })));

  it('refuses every route without a token, with a wrong one, with a user token lacking the admin scope', async () => {
    const noScope = await signToken(key, { tenant: 'acme', sub: 'alice', scope: 'mcp' });
    const otherIssuer = await signToken(key, { tenant: 'acme', sub: 'alice', scope: 'switchboard:admin', iss: 'https://elsewhere.test' });
    for (const r of routes) {
      assert.equal((await admin(r.method, r.path, { token: null })).status, 401, `${r.method} ${r.path} without a token`);
      assert.equal((await admin(r.method, r.path, { token: `${ADMIN_TOKEN}x` })).status, 401, `${r.method} ${r.path} with a wrong token`);
      assert.equal((await admin(r.method, r.path, { token: noScope })).status, 403, `${r.method} ${r.path} without the admin scope`);
      assert.equal((await admin(r.method, r.path, { token: otherIssuer })).status, 401, `${r.method} ${r.path} from another issuer`);
    }
    const scoped = await signToken(key, { tenant: 'ops', sub: 'bob', scope: 'switchboard:admin' });
    assert.equal((await admin('GET', '/upstreams', { token: scoped })).status, 200, 'a JWT with the admin scope');
  });

  it('a key file rotated under the same name: after a reload (nothing else changed) the old key is refused, its tokens kept or not, on the admin API and the endpoint', async () => {
    const keyFile = join(dir, 'key.json');
    const scoped = await signToken(key, { tenant: 'ops', sub: 'bob', scope: 'switchboard:admin' });
    const user = await signToken(key, { tenant: 'acme', sub: 'carol' });
    // Verified once each, then kept: the second use is served from the verified-token caches.
    for (let i = 0; i < 2; i++) {
      assert.equal((await admin('GET', '/upstreams', { token: scoped })).status, 200);
      assert.equal((await mcpRequest(gw, initializeBody(), { token: user })).status, 200);
    }
    const next = await makeKey('k1');
    writeFileSync(keyFile, JSON.stringify(next.publicJwk));
    try {
      assert.equal((await admin('POST', '/reload')).body.result, 'unchanged');
      assert.equal((await admin('GET', '/upstreams', { token: scoped })).status, 401, 'the admin API refuses the old key');
      assert.equal((await mcpRequest(gw, initializeBody(), { token: user })).status, 401, 'the endpoint refuses the old key');
      assert.equal((await admin('GET', '/upstreams', { token: await signToken(next, { tenant: 'ops', sub: 'bob', scope: 'switchboard:admin' }) })).status, 200, 'the new key is honoured');
    } finally {
      writeFileSync(keyFile, JSON.stringify(key.publicJwk));
      assert.equal((await admin('POST', '/reload')).body.result, 'unchanged');
    }
  });

  it('the OpenAPI document describes exactly the routes served, and the answers match it', async () => {
    const served = ADMIN_ROUTES.map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`).sort();
    const documented = Object.entries(OPENAPI.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
    assert.deepEqual(served, documented);
    const server = await buildAdminServer(new GatewayAdmin(app.gateway, app.reloader, createLogger('silent')), createLogger('silent'));
    try {
      for (const r of ADMIN_ROUTES) assert.ok(server.hasRoute({ method: r.method, url: r.url }), `${r.method} ${r.url} is served`);
    } finally {
      await server.close();
    }
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema(OPENAPI, 'openapi');
    const c = await connect();
    await c.client.callTool({ name: 'label', arguments: {} });
    for (const [path, schema] of [['/sessions', 'Session'], ['/upstreams', 'Upstream'], ['/tenants', 'Tenant']] as const) {
      const { status, body } = await admin('GET', path);
      assert.equal(status, 200);
      assert.ok(body.items.length > 0, path);
      for (const item of body.items) assert.ok(ajv.validate(`openapi#/components/schemas/${schema}`, item), `${path}: ${ajv.errorsText()}`);
    }
  });

  it('sessions: who, which tenant and endpoint, which replica; DELETE ends one', async () => {
    const c = await connect();
    const { body } = await admin('GET', '/sessions');
    const mine = body.items.find((s: any) => s.id === c.transport.sessionId);
    assert.ok(mine, 'the client session is listed');
    assert.equal(mine.subject, 'alice');
    assert.equal(mine.tenant, 'acme');
    assert.equal(mine.endpoint, '/mcp');
    assert.equal(mine.era, 'legacy');
    assert.equal(typeof mine.replica, 'string');
    assert.equal(mine.replicaAlive, true);
    const ended = await admin('DELETE', `/sessions/${mine.id}`);
    assert.equal(ended.status, 200);
    assert.deepEqual(ended.body, { id: mine.id, endedBy: mine.replica, holder: mine.replica });
    await assert.rejects(c.client.callTool({ name: 'label', arguments: {} }));
    assert.equal((await admin('DELETE', `/sessions/${mine.id}`)).status, 404);
  });

  it('upstreams: instances with their pid; restart replaces the process', async () => {
    const c = await connect();
    const before = Number(textOf(await c.client.callTool({ name: 'label', arguments: {} })).split(' ')[1]);
    const lab = (await admin('GET', '/upstreams')).body.items.find((u: any) => u.name === 'lab');
    assert.deepEqual(lab.instances.map((i: any) => i.pid), [before]);
    const restarted = await admin('POST', '/upstreams/lab/restart');
    assert.equal(restarted.status, 200);
    assert.deepEqual(restarted.body.changes.upstreams.changed, ['lab']);
    const after = Number(textOf(await c.client.callTool({ name: 'label', arguments: {} })).split(' ')[1]);
    assert.notEqual(after, before, 'a new process answers the same session');
    await until('the old process stopped', () => !alive(before));
    assert.equal((await admin('POST', '/upstreams/nope/restart')).status, 404);
  });

  it('the effective config has every secret redacted', async () => {
    const { status, body } = await admin('GET', '/config');
    assert.equal(status, 200);
    const text = JSON.stringify(body);
    for (const [what, secret] of Object.entries({ ...SECRETS, admin: ADMIN_TOKEN })) assert.ok(!text.includes(secret), `${what} is shown`);
    assert.equal(body.upstreams[0].env.API_KEY, '[redacted]');
    assert.equal(body.upstreams[1].url, 'https://%5Bredacted%5D:%5Bredacted%5D@remote.test/mcp');
    assert.equal(body.endpoints[0].path, '/mcp', 'the rest is shown as it is');
  });

  it('pins: a changed definition is pending with both versions and a diff; approving it shows the tool to the client', async () => {
    const c = await connect();
    let relisted = 0;
    c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void relisted++);
    assert.ok((await c.client.listTools()).tools.some((t) => t.name === 'label'));
    writeFileSync(file, JSON.stringify(doc(join(dir, 'key.json'), 'v2')));
    const reload = await admin('POST', '/reload');
    assert.equal(reload.body.result, 'applied');
    await until('list_changed after the reload', () => relisted > 0);
    assert.ok(!(await c.client.listTools()).tools.some((t) => t.name === 'label'), 'the changed tool is withheld');
    const pins = await admin('GET', '/pins');
    const change = pins.body.items.find((p: any) => p.upstream === 'lab' && p.tool === 'label');
    assert.ok(change, JSON.stringify(pins.body));
    assert.match(change.old.description, /\(v1\)/);
    assert.match(change.new.description, /\(v2\)/);
    assert.ok(change.diff.some((l: string) => l.startsWith('- ') && l.includes('v1')));
    assert.ok(change.diff.some((l: string) => l.startsWith('+ ') && l.includes('v2')));
    const seen = relisted;
    const approved = await admin('POST', '/pins/lab/approve', { body: { tools: [{ tool: 'label', hash: change.pendingHash }] } });
    assert.deepEqual(approved.body.items, [{ tool: 'label', outcome: 'approved' }]);
    await until('list_changed after the approval', () => relisted > seen);
    assert.ok((await c.client.listTools()).tools.some((t) => t.name === 'label'), 'the approved tool is listed');
    assert.match(textOf(await c.client.callTool({ name: 'label', arguments: {} })), /^v2 /);
    assert.equal((await admin('POST', '/pins/lab/approve', { body: { tools: [] } })).status, 400);
  });

  it('pins: a rejected definition stays withheld and is marked so; an approval of its hash still releases it', async () => {
    const c = await connect();
    writeFileSync(file, JSON.stringify(doc(join(dir, 'key.json'), 'v3')));
    assert.equal((await admin('POST', '/reload')).body.result, 'applied');
    // The new process's definition is checked when a client lists it (the reload replaced the upstream).
    await until('the v3 change pending', async () => {
      await c.client.listTools();
      return ((await admin('GET', '/pins')).body.items ?? []).some((p: any) => p.tool === 'label' && p.new?.description?.includes('(v3)'));
    });
    const change = (await admin('GET', '/pins')).body.items.find((p: any) => p.tool === 'label');
    assert.equal(change.rejected, false);
    const wrong = await admin('POST', '/pins/lab/reject', { body: { tools: [{ tool: 'label', hash: change.approvedHash }] } });
    assert.deepEqual(wrong.body.items, [{ tool: 'label', outcome: 'not-pending' }], 'only the hash reviewed');
    const rejected = await admin('POST', '/pins/lab/reject', { body: { tools: [{ tool: 'label', hash: change.pendingHash }] } });
    assert.deepEqual(rejected.body.items, [{ tool: 'label', outcome: 'rejected' }]);
    assert.equal((await admin('GET', '/pins')).body.items.find((p: any) => p.tool === 'label').rejected, true);
    assert.ok(!(await c.client.listTools()).tools.some((t) => t.name === 'label'), 'still withheld');
    assert.equal((await admin('POST', '/pins/nope/reject', { body: { tools: [{ tool: 'label', hash: change.pendingHash }] } })).status, 404);
    assert.equal((await admin('POST', '/pins/lab/reject', { body: { tools: 'label' } })).status, 400);
    const approved = await admin('POST', '/pins/lab/approve', { body: { tools: [{ tool: 'label', hash: change.pendingHash }] } });
    assert.deepEqual(approved.body.items, [{ tool: 'label', outcome: 'approved' }]);
    await until('the tool listed again', async () => (await c.client.listTools()).tools.some((t) => t.name === 'label'));
  });

  it('tenants with limits and usage; a reload of an invalid file answers every problem', async () => {
    await connect();
    const t = (await admin('GET', '/tenants')).body.items.find((x: any) => x.name === 'acme');
    assert.equal(t.limits.concurrentRequests, 10);
    assert.ok(t.usage.sessions >= 1);
    const bad = doc(join(dir, 'key.json'), 'v2');
    bad.admin.port = 'nine';
    bad.tenants[0].limitz = {};
    writeFileSync(file, JSON.stringify(bad));
    const { body } = await admin('POST', '/reload');
    assert.equal(body.result, 'invalid');
    assert.ok(body.problems.some((p: string) => p.startsWith('admin.port')), body.problems.join('\n'));
    assert.ok(body.problems.some((p: string) => p.startsWith('tenants[0].limitz')), body.problems.join('\n'));
  });
});
