// Reload under load (#18): a real gateway process (`switchboard serve`), real stdio upstreams, SDK
// clients calling tools without pause while the config is reloaded 20 times by SIGHUP with changes to
// other upstreams, tenants and endpoints. No call may fail: not on the unchanged upstream, and not on the
// replaced one either (calls in flight finish on the old process, the next ones reach the new). No child
// process may outlive the reloads that retired it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { alive, listeningAddress } from '../helpers/processes.js';
import { connectClient, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

const LABEL = join(import.meta.dirname, '..', 'fixtures', 'label-server.mjs');
const RELOADS = 20;
/** Every load loop is bounded in time as well as by the reloads. */
const LOAD_DEADLINE_MS = 120_000;

const stdio = (name: string, label: string) => ({ name, transport: 'stdio', command: process.execPath, args: [LABEL, '--label', label], sandbox: 'none' });

/** Reload n of the test: the churn upstream replaced, an extra upstream in and out, a tenant's limit and an endpoint's settings changed. */
function configFor(n: number): Record<string, unknown> {
  const extra = n % 2 === 1;
  return {
    server: { host: '127.0.0.1', port: 0 },
    metrics: { enabled: false },
    admin: { drainGraceMs: 10_000 },
    pinning: { mode: 'off' },
    tenants: [
      { name: 'anonymous', endpoints: ['*'] },
      { name: 'other', endpoints: ['/other'], limits: { requestsPerSecond: 10 + n } },
    ],
    upstreams: [stdio('steady', 'steady'), stdio('churn', `v${n}`), ...(extra ? [stdio('extra', `x${n}`)] : [])],
    endpoints: [
      { path: '/mcp', upstreams: ['steady'] },
      { path: '/other', upstreams: extra ? ['churn', 'extra'] : ['churn'], prefix: 'always', failureMode: n % 3 === 0 ? 'open' : 'closed' },
    ],
  };
}

/** Every process descended from `pid` (its upstreams, whatever process group they run in). */
function descendants(pid: number): Set<number> {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone while reading
    }
  }
  const out = new Set<number>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [p, pp] of parent) {
      if (!out.has(p) && (pp === pid || out.has(pp))) {
        out.add(p);
        grew = true;
      }
    }
  }
  return out;
}

describe('reload under load', () => {
  let dir: string;
  let file: string;
  let child: ChildProcess;
  let logs = '';
  const clients: Client[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-reload-load-'));
    file = join(dir, 'switchboard.yaml');
    writeFileSync(file, JSON.stringify(configFor(0)));
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', file], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (b: Buffer) => void (logs += b.toString()));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    if (child.exitCode === null) {
      const exit = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exit;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const count = (msg: string) => logs.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length;

  it(`${RELOADS} reloads by SIGHUP while clients call tools: no failed call, no leaked process`, async (t) => {
    const address = await listeningAddress(child, 30_000);
    const gw = { url: (p = '/mcp') => new URL(p, address) } as Parameters<typeof connectClient>[0];
    for (let i = 0; i < 4; i++) clients.push(await connectClient(gw, 'streamable-http'));
    const churnClient = await connectClient(gw, 'streamable-http', { path: '/other' });
    clients.push(churnClient);
    const steadyPid = Number(textOf(await clients[0]!.callTool({ name: 'label', arguments: {} })).split(' ')[1]);
    await churnClient.callTool({ name: 'churn__label', arguments: {} });
    const startChildren = descendants(child.pid!);

    let stop = false;
    const steady = { ok: 0, failed: [] as string[], pids: new Set<number>() };
    const churn = { ok: 0, failed: [] as string[], pids: new Set<number>() };
    const loop = async (c: Client, name: string, args: Record<string, unknown>, into: typeof steady) => {
      const deadline = Date.now() + LOAD_DEADLINE_MS;
      while (!stop && Date.now() < deadline) {
        try {
          const text = textOf(await c.callTool({ name, arguments: args }));
          into.ok++;
          const pid = Number(/ (\d+)$/.exec(text)?.[1]);
          if (pid) into.pids.add(pid);
        } catch (err) {
          into.failed.push((err as Error).message);
        }
      }
    };
    const load = [
      ...clients.slice(0, 4).map((c) => loop(c, 'label', {}, steady)),
      loop(churnClient, 'churn__sleep', { ms: 150 }, churn),
      loop(churnClient, 'churn__label', {}, churn),
    ];

    for (let n = 1; n <= RELOADS; n++) {
      writeFileSync(file, JSON.stringify(configFor(n)));
      const before = count('config reloaded');
      child.kill('SIGHUP');
      await until(`reload ${n} applied`, () => count('config reloaded') > before, 30_000);
    }
    await until('calls flowed after the last reload', () => steady.ok > 0 && churn.ok > 0);
    stop = true;
    await Promise.all(load);

    t.diagnostic(`calls during ${RELOADS} reloads: unchanged upstream ${steady.ok} ok, replaced upstream ${churn.ok} ok (${churn.pids.size} processes)`);
    assert.deepEqual(steady.failed, [], 'calls on the unchanged upstream');
    assert.deepEqual(churn.failed, [], 'calls on the upstream replaced at every reload');
    assert.deepEqual([...steady.pids], [steadyPid], 'the unchanged upstream kept its one process');
    assert.equal(count('config reload refused: the file is invalid; nothing changed'), 0);
    // The last config has the shape of the first (no extra upstream): as many processes as at the start.
    await until('every retired upstream drained and stopped', () => descendants(child.pid!).size === startChildren.size, 30_000);
    assert.ok(descendants(child.pid!).has(steadyPid));
    const current = Number(textOf(await churnClient.callTool({ name: 'churn__label', arguments: {} })).split(' ')[1]);
    const leaked = [...churn.pids].filter((p) => p !== current && alive(p));
    assert.deepEqual(leaked, [], 'replaced churn processes still alive');
    assert.equal(count('retired upstream drained and stopped') >= RELOADS, true, 'each reload retired the replaced upstream');
    assert.ok(!/"cutCalls":[1-9]/.test(logs), 'no call was cut by the drain');
  });

  it('SIGHUP with an invalid file: refused and logged with every problem, and everything goes on as it was', async () => {
    const bad = configFor(RELOADS) as Record<string, any>;
    bad.upstreams[1].sharing = 'per-everyone';
    bad.endpoints[1].failurMode = 'open';
    writeFileSync(file, JSON.stringify(bad));
    const beforePid = textOf(await clients[0]!.callTool({ name: 'label', arguments: {} }));
    child.kill('SIGHUP');
    await until('the refusal logged', () => count('config reload refused: the file is invalid; nothing changed') === 1);
    const line = logs.split('\n').find((l) => l.includes('config reload refused'))!;
    const problems = (JSON.parse(line) as { problems: string[] }).problems;
    assert.ok(problems.some((p) => p.startsWith('upstreams[1].sharing')), problems.join('\n'));
    assert.ok(problems.some((p) => p.startsWith('endpoints[1].failurMode')), problems.join('\n'));
    assert.equal(textOf(await clients[0]!.callTool({ name: 'label', arguments: {} })), beforePid);
    assert.match(textOf(await clients[4]!.callTool({ name: 'churn__label', arguments: {} })), new RegExp(`^v${RELOADS} `));
  });
});
