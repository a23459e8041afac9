// Hidden-text scanning beyond one endpoint's settings: a tenant's override, a reload that changes the
// settings under open sessions, 2026-07-28 requests (which run through the same stages as a session's),
// and the pin review: a changed tool definition that
// carries hidden text shows what and where in the admin API's /pins, the pins file and `switchboard
// pins list`. The hostile fixture is test/fixtures/hidden-text-server.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../../src/app.js';
import { checkConfigFile } from '../../src/config-check.js';
import { createLogger } from '../../src/observability/logger.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { inputRound, modernPost } from '../helpers/modern-http.js';
import { runToExit } from '../helpers/processes.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const FIXTURE = resolve('test/fixtures/hidden-text-server.mjs');
const F = JSON.parse(spawnSync(process.execPath, [FIXTURE, '--print'], { encoding: 'utf8' }).stdout) as { samples: Record<string, string>; pattern: string; legit: string; shifted: Json };
const UPSTREAM = { name: 'ht', transport: 'stdio' as const, command: process.execPath, args: [FIXTURE], sandbox: 'none' as const, sharing: 'shared' as const };
const ADMIN_TOKEN = 'hidden-text-review-admin-token-0123456789';
/** The tag characters the rug pull adds to reply's description. */
const SHIFT_TAGS = [...F.shifted.description].length - [...F.legit].length;

const root = mkdtempSync(join(tmpdir(), 'swb-hidden-text-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('hidden-text scanning: a tenant overrides its endpoints', () => {
  let gw: RunningGateway;

  before(async () => {
    gw = await startGateway({
      upstreams: [UPSTREAM],
      // Auth off: every request is tenant "anonymous", configured here with its own scanning settings.
      tenants: [{ name: 'anonymous', endpoints: ['*'], guardrails: { hiddenText: { definitions: 'off', results: 'block' } } }],
      endpoints: [{ path: '/mcp', upstreams: ['ht'], guardrails: { hiddenText: { definitions: 'block', results: 'audit', patterns: [F.pattern] } } }],
    });
  });
  after(() => gw?.close());

  it('each key the tenant sets replaces the endpoint’s; the rest (the patterns) are the endpoint’s', async () => {
    const c = await connectClient(gw, 'streamable-http');
    try {
      const names = (await c.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('hidden_tag') && names.includes('hidden_property'), 'definitions: off for this tenant');
      for (const kind of ['tag', 'pattern']) {
        await assert.rejects(c.callTool({ name: 'reply', arguments: { kind } }), (err: McpError) => (err.data as Json)?.code === 'SWB_HIDDEN_TEXT_BLOCKED', kind);
      }
      assert.equal(textOf(await c.callTool({ name: 'reply', arguments: { kind: 'none' } })), F.samples.none);
    } finally {
      await c.close();
    }
  });
});

describe('hidden-text scanning: 2026-07-28 requests and the pin review', () => {
  const dir = join(root, 'review');
  const shiftFile = join(dir, 'shift');
  const pinsFile = join(dir, 'pins.json');
  const configFile = join(dir, 'config.yaml');
  const input = {
    upstreams: [{ ...UPSTREAM, env: { SHIFT_FILE: shiftFile } }],
    endpoints: [
      { path: '/mcp', upstreams: ['ht'], guardrails: { hiddenText: { definitions: 'audit' as const, results: 'block' as const, patterns: [F.pattern] } } },
      { path: '/strip', upstreams: ['ht'], guardrails: { hiddenText: { definitions: 'strip' as const, results: 'strip' as const, patterns: [F.pattern] } } },
    ],
    pinning: { file: pinsFile },
    admin: { enabled: true, port: 0, token: ADMIN_TOKEN },
  };
  let gw: RunningGateway;

  before(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(configFile, JSON.stringify(input));
    gw = await startGateway(input);
  });
  after(() => gw?.close());

  it('2026-07-28: results are blocked or stripped, and definitions stripped, as for a session', async () => {
    const blocked = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'reply', arguments: { kind: 'tag' } });
    assert.equal(blocked.body.error?.code, -32000, JSON.stringify(blocked.body));
    assert.equal(blocked.body.error.data.code, 'SWB_HIDDEN_TEXT_BLOCKED');
    const stripped = await modernPost(gw.url('/strip'), 'tools/call', { name: 'reply', arguments: { kind: 'bidi' } });
    assert.equal(stripped.status, 200);
    assert.equal(stripped.body.result.content[0].text, 'Deleted only txt.eliforp as asked.');
    assert.equal(stripped.body.result.structuredContent.answer.nested.list[1], 'Deleted only txt.eliforp as asked.');
    assert.equal(stripped.body.result.resultType, 'complete');
    const list = await modernPost(gw.url('/strip'), 'tools/list', {});
    const tools = list.body.result.tools as Json[];
    assert.equal(tools.find((t) => t.name === 'hidden_tag')?.description, 'Returns the weather.');
    assert.ok(!tools.some((t) => t.name === 'hidden_property'));
  });

  it("2026-07-28: an upstream's error, its listed resources and its instructions are screened as for a session (found by a review)", async () => {
    const error = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'reply', arguments: { kind: 'tag', where: 'error' } });
    assert.equal(error.body.error?.data?.code, 'SWB_HIDDEN_TEXT_BLOCKED', JSON.stringify(error.body));
    const strippedError = await modernPost(gw.url('/strip'), 'tools/call', { name: 'reply', arguments: { kind: 'tag', where: 'error' } });
    assert.equal(strippedError.body.error?.data?.detail, 'Sunny, 21 degrees.', JSON.stringify(strippedError.body));
    const resources = await modernPost(gw.url('/strip'), 'resources/list', {});
    assert.equal((resources.body.result.resources as Json[]).find((r) => r.name === 'listed note')?.description, 'A note.');
    const discover = await modernPost(gw.url('/strip'), 'server/discover', {});
    assert.equal(discover.body.result.instructions, 'Use reply for the weather.', JSON.stringify(discover.body));
    // A sampling request the upstream makes is refused to it (block), or becomes an input request, cleaned (strip; left
    // unanswered, last: the shared stdio upstream's requests are told apart only while one call is in flight).
    const refused = await modernPost(gw.url('/mcp'), 'tools/call', { name: 'reply', arguments: { kind: 'tag', where: 'sampling' } });
    assert.equal(refused.body.result?.content?.[0]?.text, 'sampling refused: -32000 SWB_HIDDEN_TEXT_BLOCKED', JSON.stringify(refused.body));
    const round = inputRound(await modernPost(gw.url('/strip'), 'tools/call', { name: 'reply', arguments: { kind: 'tag', where: 'sampling' } }));
    assert.equal(round.method, 'sampling/createMessage');
    assert.equal(round.params.messages[0].content.text, 'Sunny, 21 degrees.');
    assert.equal(round.params.systemPrompt, 'Sunny, 21 degrees.');
  });

  it('a changed tool definition with hidden text: its pending pin shows the findings (admin API, pins file, CLI)', async () => {
    const c = await connectClient(gw, 'streamable-http');
    try {
      assert.ok((await c.listTools()).tools.some((t) => t.name === 'reply'));
      await until('the baseline pins', () => {
        try {
          return JSON.parse(readFileSync(pinsFile, 'utf8')).upstreams.ht?.reply?.approved !== undefined;
        } catch {
          return false;
        }
      });
      writeFileSync(shiftFile, '');
      const admin = async () => {
        const res = await fetch(new URL('/pins', gw.app.adminUrl), { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        return ((await res.json()) as { items: Json[] }).items;
      };
      // The change is seen when a list shows it (the upstream announced it; the client lists again).
      await until('the pending change of reply', async () => {
        await c.listTools();
        return (await admin()).some((p) => p.tool === 'reply');
      });
      const change = (await admin()).find((p) => p.tool === 'reply')!;
      assert.deepEqual(change.findings, [{ kind: 'tag', path: 'description', count: SHIFT_TAGS }]);
      assert.ok(!(await c.listTools()).tools.some((t) => t.name === 'reply'), 'withheld until approved, as any change');
      await until('the pins file', () => readFileSync(pinsFile, 'utf8').includes(change.pendingHash));
      assert.deepEqual(JSON.parse(readFileSync(pinsFile, 'utf8')).upstreams.ht.reply.pending.findings, change.findings);
      const listed = await runToExit(process.execPath, ['--import', 'tsx', 'src/main.ts', 'pins', 'list', '--config', configFile], { env: { ...process.env } });
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(`^  hidden text\\ttag ×${SHIFT_TAGS} in description$`, 'm'));
    } finally {
      await c.close();
    }
  });
});

describe('hidden-text scanning: a reload changes the settings under open sessions', () => {
  const file = join(root, 'reload.yaml');
  const doc = (endpointResults: string, tenant?: Json) => ({
    server: { host: '127.0.0.1', port: 0 },
    metrics: { port: 0 },
    upstreams: [UPSTREAM],
    endpoints: [{ path: '/mcp', upstreams: ['ht'], guardrails: { hiddenText: { results: endpointResults } } }],
    ...(tenant ? { tenants: [{ name: 'anonymous', endpoints: ['*'], guardrails: { hiddenText: tenant } }] } : {}),
  });

  it('the endpoint’s settings, then a tenant’s, take effect on the next call of the same session', async () => {
    writeFileSync(file, JSON.stringify(doc('strip')));
    const app = await buildApp(checkConfigFile(file).config, { configFile: file, logger: createLogger(process.env.LOG_LEVEL ?? 'silent') });
    const base = (await app.listen()).replace('localhost', '127.0.0.1');
    const gw: RunningGateway = { app, base, url: (p = '/mcp') => new URL(p, base), close: () => app.close() };
    const c = await connectClient(gw, 'streamable-http');
    try {
      const call = async () => textOf(await c.callTool({ name: 'reply', arguments: { kind: 'bidi' } }));
      assert.equal(await call(), 'Deleted only txt.eliforp as asked.');
      writeFileSync(file, JSON.stringify(doc('off')));
      assert.equal((await app.reload('test')).report.result, 'applied');
      assert.equal(await call(), F.samples.bidi, 'scanning off: passed on as it came');
      writeFileSync(file, JSON.stringify(doc('off', { results: 'block' })));
      assert.equal((await app.reload('test')).report.result, 'applied');
      await assert.rejects(call(), (err: McpError) => (err.data as Json)?.code === 'SWB_HIDDEN_TEXT_BLOCKED');
    } finally {
      await c.close();
      await app.close();
    }
  });
});
