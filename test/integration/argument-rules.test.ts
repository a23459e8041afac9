// Tenant argument rules through the official SDK client: the gateway fronts server-everything and a
// recording stdio server (test/fixtures/recording-server.mjs) on one endpoint. Allowed calls reach the
// upstream; a path outside the prefixes, a ".." escape, a sibling that shares the prefix string and a
// schema violation are refused by the gateway with a JSON-RPC error naming the rule, are never seen by
// the upstream (its own record of calls says so), are audited with rule "arguments:<name>" and are
// counted in switchboard_policy_denials_total{reason="argument_rule"}. A tenant without rules is untouched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { textOf } from '../helpers/sdk.js';
import { ISSUER, JwksServer, PUBLIC_URL, connectWithToken, makeKey, signToken, type Json, type TestKey, type TokenClient } from '../helpers/tokens.js';

const recorder = {
  name: 'fs',
  transport: 'stdio' as const,
  command: process.execPath,
  args: ['test/fixtures/recording-server.mjs'],
  sandbox: 'none' as const,
  sharing: 'shared' as const,
};

const UNDER = ['/srv/data', '/tmp/scratch'];

const TENANTS = [
  {
    name: 'dev',
    endpoints: ['*'],
    arguments: [
      { name: 'files-under-data', tools: ['fs__*'], paths: { arguments: ['path', 'source', 'destination'], under: UNDER } },
      { name: 'echo-short', tools: ['everything__echo'], schema: { type: 'object', properties: { message: { type: 'string', maxLength: 20 } }, required: ['message'] } },
    ],
  },
  { name: 'open', endpoints: ['*'] },
];

function auditLines(lines: string[]): Json[] {
  return lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');
}

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('argument rules through the SDK client (everything + recording server)', () => {
  let key: TestKey;
  let jwks: JwksServer;
  let gw: RunningGateway;
  let dev: TokenClient;
  let open: TokenClient;
  const logLines: string[] = [];

  /** Every tools/call the recording server has received (a call through the open tenant: no rules). */
  const seenUpstream = async (): Promise<Array<{ name: string; arguments: Json }>> => JSON.parse(textOf(await open.client.callTool({ name: 'fs__calls', arguments: {} })));

  /** The wire-level error of a refused call (captured before the SDK parses it). */
  const refusal = async (name: string, args: Json): Promise<Json> => {
    const from = dev.received.length;
    await assert.rejects(dev.client.callTool({ name, arguments: args }), McpError);
    const msg = dev.received.slice(from).find((m) => 'error' in m && 'id' in m);
    assert.ok(msg, 'an error response on the wire');
    return msg.error as Json;
  };

  before(async () => {
    key = await makeKey('arguments-key', 'ES256');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway(
      {
        server: { publicUrl: PUBLIC_URL },
        auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url, audience: [PUBLIC_URL] },
        upstreams: [everythingUpstream('everything', 'shared'), recorder],
        // /solo shows the fs upstream unprefixed: rules written for "fs__*" must hold there too.
        endpoints: [
          { path: '/mcp', upstreams: ['everything', 'fs'] },
          { path: '/solo', upstreams: ['fs'] },
        ],
        tenants: TENANTS,
      },
      { logLines },
    );
    dev = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'dev', sub: 'dev-user' }));
    open = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'open', sub: 'open-user' }));
  });
  after(async () => {
    await dev?.close().catch(() => {});
    await open?.close().catch(() => {});
    await gw?.close();
    await jwks?.close();
  });

  it('allowed calls pass and reach the upstream', async () => {
    const read = await dev.client.callTool({ name: 'fs__read_file', arguments: { path: '/srv/data/reports/../q1.txt' } });
    assert.equal(textOf(read), 'read_file {"path":"/srv/data/reports/../q1.txt"}', 'forwarded as sent (the check does not rewrite)');
    const move = await dev.client.callTool({ name: 'fs__move_file', arguments: { source: '/srv/data/a', destination: '/tmp/scratch/b' } });
    assert.equal(move.isError, undefined);
    const echo = await dev.client.callTool({ name: 'everything__echo', arguments: { message: 'short enough' } });
    assert.match(textOf(echo), /short enough/);
    const seen = await seenUpstream();
    assert.ok(seen.some((c) => c.name === 'read_file' && c.arguments.path === '/srv/data/reports/../q1.txt'));
    assert.ok(seen.some((c) => c.name === 'move_file' && c.arguments.destination === '/tmp/scratch/b'));
  });

  it('refuses a path outside the prefixes, a ".." escape and a prefix sibling; the upstream never sees them', async () => {
    const cases: Array<[string, Json, string]> = [
      ['fs__read_file', { path: '/etc/passwd' }, 'path'],
      ['fs__read_file', { path: '/srv/data/../../etc/shadow' }, 'path'],
      ['fs__read_file', { path: '/srv/database/secrets' }, 'path'],
      ['fs__move_file', { source: '/srv/data/ok', destination: '/root/.ssh/authorized_keys' }, 'destination'],
      ['fs__read_file', { path: 'relative/notes.txt' }, 'path'],
    ];
    for (const [name, args, argument] of cases) {
      const err = await refusal(name, args);
      assert.equal(err.code, -32602, 'InvalidParams');
      assert.match(err.message, new RegExp(`^Argument rule "files-under-data" refused tool "${name}": argument "${argument}" \\(`));
      assert.deepEqual(err.data, { code: 'SWB_ARGUMENT_REFUSED', rule: 'files-under-data', tool: name, argument });
    }
    const first = await refusal('fs__read_file', { path: '/etc/passwd' });
    assert.equal(first.message, 'Argument rule "files-under-data" refused tool "fs__read_file": argument "path" ("/etc/passwd") is not under /srv/data, /tmp/scratch');
    const seen = JSON.stringify(await seenUpstream());
    for (const leaked of ['/etc/passwd', 'shadow', '/srv/database', 'authorized_keys', 'relative/notes']) assert.ok(!seen.includes(leaked), `${leaked} reached the upstream`);
  });

  it('refuses a schema violation before server-everything sees it', async () => {
    const err = await refusal('everything__echo', { message: 'x'.repeat(21) });
    assert.equal(err.code, -32602);
    assert.equal(err.message, 'Argument rule "echo-short" refused tool "everything__echo": argument "message" must NOT have more than 20 characters (the rule\'s schema)');
    assert.deepEqual(err.data, { code: 'SWB_ARGUMENT_REFUSED', rule: 'echo-short', tool: 'everything__echo', argument: 'message' });
    const missing = await refusal('everything__echo', {});
    assert.match(missing.message, /must have required property 'message'/);
  });

  it('audits each refusal as a denial with rule "arguments:<name>", and counts it', async () => {
    const from = logLines.length;
    await refusal('fs__read_file', { path: '/var/log/auth.log' });
    await refusal('everything__echo', { message: 'y'.repeat(50) });
    const lines = auditLines(logLines.slice(from)).filter((l) => l.session === dev.transport.sessionId);
    assert.equal(lines.length, 2, 'one audit line per refused call');
    const common = { tenant: 'dev', subject: 'dev-user', endpoint: '/mcp', method: 'tools/call', decision: 'deny', outcome: 'denied', responseBytes: 0 };
    assert.deepEqual({ ...lines[0], ...common, name: 'fs__read_file', rule: 'arguments:files-under-data' }, lines[0]);
    assert.deepEqual({ ...lines[1], ...common, name: 'everything__echo', rule: 'arguments:echo-short' }, lines[1]);
    assert.ok(!JSON.stringify(lines).includes('/var/log/auth.log'), 'arguments are never logged');
    const metrics = await (await fetch(gw.app.metricsUrl!)).text();
    assert.ok((sample(metrics, 'switchboard_policy_denials_total', { reason: 'argument_rule' }) ?? 0) >= 2);
    assert.ok(!metrics.includes('auth.log'));
  });

  it('a rule written for the prefixed name also holds on an endpoint that shows the tool unprefixed', async () => {
    const solo = await connectWithToken(gw, 'streamable-http', await signToken(key, { tenant: 'dev', sub: 'dev-user' }), { path: '/solo' });
    try {
      await assert.rejects(solo.client.callTool({ name: 'read_file', arguments: { path: '/etc/passwd' } }), /Argument rule "files-under-data" refused tool "read_file"/);
      const ok = await solo.client.callTool({ name: 'read_file', arguments: { path: '/srv/data/x' } });
      assert.equal(textOf(ok), 'read_file {"path":"/srv/data/x"}');
      assert.ok(!(await seenUpstream()).some((c) => c.arguments?.path === '/etc/passwd'), 'the upstream never saw the refused call');
    } finally {
      await solo.close();
    }
  });

  it('leaves a tenant without argument rules untouched', async () => {
    const r = await open.client.callTool({ name: 'fs__read_file', arguments: { path: '/etc/hosts' } });
    assert.equal(textOf(r), 'read_file {"path":"/etc/hosts"}');
    const echo = await open.client.callTool({ name: 'everything__echo', arguments: { message: 'z'.repeat(40) } });
    assert.match(textOf(echo), /z{40}/);
  });
});
