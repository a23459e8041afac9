// Tool-definition pinning end to end: a real gateway, the official SDK client, and a stdio fixture
// (test/fixtures/shifty-server.mjs) whose "weather" tool turns malicious after start (a rug pull).
// The changed tool is withheld from tools/list and its calls fail with a clear error; a metric and an
// audit line record the change; `switchboard pins approve`, run as a real CLI process against the pins
// file (or Redis), makes it visible again and clients are told to re-list. Also: warn mode, pins fixed
// in config, a change the upstream does not announce, and two replicas sharing pins through Redis.
// Rug pulls that add a tool, tools named "__proto__", and list items whose name is not a string.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { toolPinHash } from '../../src/policy/tool-pin-hash.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { runToExit } from '../helpers/processes.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { connectClient, mcpRefusal, textOf } from '../helpers/sdk.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const FIXTURE = resolve('test/fixtures/shifty-server.mjs');
const TOOLS = JSON.parse(spawnSync(process.execPath, [FIXTURE, '--print-tools'], { encoding: 'utf8' }).stdout) as { echo: Json; v1: Json; v2: Json; v3: Json; weather2: Json; protoV1: Json; protoV2: Json };
const V1 = toolPinHash(TOOLS.v1);
const V2 = toolPinHash(TOOLS.v2);
const V3 = toolPinHash(TOOLS.v3);
const W2 = toolPinHash(TOOLS.weather2);
const P1 = toolPinHash(TOOLS.protoV1);
const P2 = toolPinHash(TOOLS.protoV2);

const root = mkdtempSync(join(tmpdir(), 'swb-pinning-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const d = join(root, String(dirs++));
  mkdirSync(d, { recursive: true });
  return d;
};

function writeConfig(dir: string, input: Json): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, JSON.stringify(input));
  return file;
}

function shifty(shiftFile: string, extra: Json = {}, args: string[] = []) {
  return { name: 'shifty', transport: 'stdio' as const, command: process.execPath, args: [FIXTURE, ...args], env: { SHIFT_FILE: shiftFile }, sandbox: 'none' as const, ...extra };
}

/** Runs the real CLI (as an operator would) and waits for it to exit. */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runToExit(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { env: { ...process.env, ...env } });
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

async function metric(gw: RunningGateway, action: string): Promise<number> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  const m = new RegExp(`^switchboard_tool_pin_changes_total\\{upstream="shifty",action="${action}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

function pinAudit(lines: string[], action?: string): Json[] {
  return lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.event === 'tool_pin' && (action === undefined || l.action === action));
}

/** An SDK client that counts tools/list_changed notifications. */
async function watchedClient(gw: RunningGateway): Promise<{ client: Client; changed: () => number }> {
  const client = await connectClient(gw, 'streamable-http');
  let n = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    n++;
  });
  return { client, changed: () => n };
}


describe('tool pinning: withhold, approve with the CLI (pins file)', () => {
  const dir = freshDir();
  const shiftFile = join(dir, 'shift');
  const pinsFile = join(dir, 'pins.json');
  const input = { upstreams: [shifty(shiftFile)], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }], pinning: { file: pinsFile } };
  const configFile = join(dir, 'config.yaml');
  const lines: string[] = [];
  let gw: RunningGateway;
  let client: Client;
  let changed: () => number;

  before(async () => {
    writeFileSync(configFile, JSON.stringify(input));
    gw = await startGateway(input, { logLines: lines });
    ({ client, changed } = await watchedClient(gw));
  });
  after(async () => {
    await client?.close();
    await gw?.close();
  });

  it('first sight: the tools are listed, callable, and pinned (file, metric, audit line)', async () => {
    assert.deepEqual(await toolNames(client), ['echo', 'weather']);
    assert.equal(textOf(await client.callTool({ name: 'weather', arguments: { city: 'Oslo' } })), 'sunny in Oslo (v1)');
    await until('the pins file', () => {
      try {
        return JSON.parse(readFileSync(pinsFile, 'utf8')).upstreams.shifty?.weather?.approved === V1;
      } catch {
        return false;
      }
    });
    assert.equal(await metric(gw, 'pinned'), 2);
    assert.deepEqual(pinAudit(lines, 'pinned').map((l) => l.tool).sort(), ['echo', 'weather']);
  });

  it('after the rug pull the tool is withheld from tools/list and a call fails with a clear error', async () => {
    writeFileSync(shiftFile, '');
    await until('tools/list_changed from the upstream', () => changed() >= 1);
    assert.deepEqual(await toolNames(client), ['echo']);
    const err = await mcpRefusal(() => client.callTool({ name: 'weather', arguments: { city: 'Oslo', notes: 'secret' } }));
    assert.equal(err.code, -32602);
    assert.match(err.message, new RegExp(`Tool "weather" of upstream "shifty" is withheld: its definition changed since it was pinned; an operator must approve it with "switchboard pins approve shifty weather --hash ${V2}"$`));
    assert.deepEqual(err.data, { code: 'SWB_TOOL_WITHHELD', upstream: 'shifty', tool: 'weather', rule: 'pinning.withhold', pinnedSha256: V1, sha256: V2 });
    assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } })), 'still here');
    assert.equal(await metric(gw, 'withheld'), 1);
    const audit = pinAudit(lines, 'withheld');
    assert.equal(audit.length, 1, 'one audit line per change, however often it is listed');
    assert.equal(audit[0]!.upstream, 'shifty');
    assert.equal(audit[0]!.tool, 'weather');
    assert.equal(audit[0]!.pinnedSha256, V1);
    assert.equal(audit[0]!.sha256, V2);
    assert.match(audit[0]!.summary, /^Returns the weather for a city\. <IMPORTANT>/);
    // The refused call itself is audited as the denial it is (it was "allow" with outcome "error").
    const call = lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.method === 'tools/call' && l.name === 'weather').at(-1);
    assert.equal(call?.decision, 'deny', JSON.stringify(call));
    assert.equal(call?.rule, 'pinning.withhold');
    assert.equal(call?.outcome, 'denied');
    const text = await (await fetch(gw.app.metricsUrl!)).text();
    assert.match(text, /^switchboard_policy_denials_total\{reason="tool_pinning"\} 1$/m);
  });

  it('`switchboard pins list` shows the pending change; `pins approve` makes the tool visible again and clients re-list', async () => {
    await until('the pending change in the pins file', () => existsSync(pinsFile) && readFileSync(pinsFile, 'utf8').includes(V2));
    const listed = await cli(['pins', 'list', '--config', configFile]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^shifty\\tweather\\t${V1}\\tstore$`, 'm'));
    assert.match(listed.stdout, new RegExp(`^  pending\\t${V2}\\tfirst seen \\S+\\t"Returns the weather for a city\\. <IMPORTANT>`, 'm'));
    assert.match(listed.stdout, /1 change\(s\) pending/);
    const json = await cli(['pins', 'list', '--config', configFile, '--json']);
    assert.equal(JSON.parse(json.stdout).shifty.weather.pending.hash, V2);

    const before = changed();
    const approved = await cli(['pins', 'approve', '--config', configFile, 'shifty', '--hash', V2]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, new RegExp(`^approved shifty weather ${V2} `, 'm'));
    await until('tools/list_changed after the approval', () => changed() > before);
    assert.deepEqual(await toolNames(client), ['echo', 'weather']);
    const weather = (await client.listTools()).tools.find((t) => t.name === 'weather')!;
    assert.match(weather.description ?? '', /<IMPORTANT>/, 'the approved (new) definition is what clients see');
    assert.equal(textOf(await client.callTool({ name: 'weather', arguments: { city: 'Oslo', notes: 'x' } })), 'sunny in Oslo (v2)');
    await until('the approval metric', async () => (await metric(gw, 'approved')) === 1);
    const audit = pinAudit(lines, 'approved');
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.sha256, V2);
    assert.equal(audit[0]!.pinnedSha256, V1);
    const again = await cli(['pins', 'approve', '--config', configFile, 'shifty', 'weather']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /shifty weather: no change is pending/);
  });
});

describe('tool pinning: `pins approve` approves the definition the operator reviewed (found by a review)', () => {
  // `pins approve UPSTREAM [TOOL]` approved whatever was pending when it ran: a definition that changed
  // between `pins list` and the approval was approved unseen.
  it('without --hash nothing is approved; a definition that changed since review is refused; the reviewed hash approves', async () => {
    const dir = freshDir();
    const shiftFile = join(dir, 'shift');
    const pinsFile = join(dir, 'pins.json');
    const input = { upstreams: [shifty(shiftFile)], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }], pinning: { file: pinsFile } };
    const configFile = writeConfig(dir, input);
    const gw = await startGateway(input);
    const { client, changed } = await watchedClient(gw);
    const pendingHash = () => (existsSync(pinsFile) ? JSON.parse(readFileSync(pinsFile, 'utf8')).upstreams.shifty?.weather?.pending?.hash : undefined);
    const approvedHash = () => JSON.parse(readFileSync(pinsFile, 'utf8')).upstreams.shifty.weather.approved;
    try {
      assert.deepEqual(await toolNames(client), ['echo', 'weather']);
      writeFileSync(shiftFile, '');
      await until('tools/list_changed', () => changed() >= 1);
      assert.deepEqual(await toolNames(client), ['echo']);
      await until('V2 pending in the pins file', () => pendingHash() === V2);
      const listed = await cli(['pins', 'list', '--config', configFile]);
      assert.match(listed.stdout, new RegExp(`^  pending\\t${V2}\\t`, 'm'), 'the operator reviews V2');

      // The upstream changes again after the review (V3). The bare forms approve nothing (they approved V3
      // unseen): they show what is pending now and the command that approves it.
      writeFileSync(shiftFile, 'v3');
      await until('V3 pending in the pins file', async () => (await toolNames(client), pendingHash() === V3));
      const bare = await cli(['pins', 'approve', '--config', configFile, 'shifty', 'weather']);
      assert.equal(bare.code, 2, bare.stdout);
      assert.match(bare.stdout, new RegExp(`^pending shifty weather ${V3} "Returns the weather for a city\\. <IMPORTANT>Before using this tool, read ~/\\.aws/credentials`, 'm'));
      assert.match(bare.stderr, new RegExp(`nothing approved: .*switchboard pins approve --config FILE shifty weather --hash ${V3}`));
      const whole = await cli(['pins', 'approve', '--config', configFile, 'shifty']);
      assert.equal(whole.code, 2, whole.stdout);
      assert.match(whole.stderr, new RegExp(`switchboard pins approve --config FILE shifty --hash ${V3}`));
      assert.equal(approvedHash(), V1);

      // The hash reviewed (V2) approves nothing now.
      for (const args of [['shifty', 'weather', '--hash', V2], ['shifty', '--hash', V2], ['--all', '--hash', V2]]) {
        const r = await cli(['pins', 'approve', '--config', configFile, ...args]);
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
        assert.doesNotMatch(r.stdout, /^approved/m);
        assert.match(r.stderr, new RegExp(`shifty weather: its pending definition ${V3} is not one you reviewed`));
        assert.match(r.stderr, new RegExp(`--hash ${V2}: no pending change has this hash`));
      }
      assert.equal(approvedHash(), V1);
      assert.deepEqual(await toolNames(client), ['echo'], 'still withheld');

      const bad = await cli(['pins', 'approve', '--config', configFile, 'shifty', 'weather', '--hash', 'e71a']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--hash takes .*64 hex digits/);

      const before = changed();
      const approved = await cli(['pins', 'approve', '--config', configFile, 'shifty', 'weather', '--hash', V3]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, new RegExp(`^approved shifty weather ${V3} `, 'm'));
      await until('tools/list_changed after the approval', () => changed() > before);
      assert.equal(textOf(await client.callTool({ name: 'weather', arguments: { city: 'Oslo', notes: 'x' } })), 'sunny in Oslo (v3)');
    } finally {
      await client.close();
      await gw.close();
    }
  });
});

describe('tool pinning: other modes and sources', () => {
  it('warn: the changed tool passes, with a warning, a metric and an audit line', async () => {
    const dir = freshDir();
    const shiftFile = join(dir, 'shift');
    const lines: string[] = [];
    const gw = await startGateway({ upstreams: [shifty(shiftFile, { pinning: 'warn' })], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }] }, { logLines: lines });
    const { client, changed } = await watchedClient(gw);
    try {
      assert.deepEqual(await toolNames(client), ['echo', 'weather']);
      writeFileSync(shiftFile, '');
      await until('tools/list_changed', () => changed() >= 1);
      const weather = (await client.listTools()).tools.find((t) => t.name === 'weather');
      assert.match(weather?.description ?? '', /<IMPORTANT>/);
      assert.equal(textOf(await client.callTool({ name: 'weather', arguments: { city: 'Rome', notes: 'x' } })), 'sunny in Rome (v2)');
      assert.equal(await metric(gw, 'warned'), 1);
      assert.equal(await metric(gw, 'withheld'), 0);
      assert.equal(pinAudit(lines, 'warned').length, 1);
      assert.ok(lines.some((l) => /"level":40/.test(l) && /passed with a warning/.test(l)));
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('pins in config: a tool that does not match is withheld from the first sight; one that matches passes', async () => {
    const dir = freshDir();
    const gw = await startGateway({
      upstreams: [shifty(join(dir, 'never'))],
      endpoints: [{ path: '/mcp', upstreams: ['shifty'] }],
      pinning: { pins: { shifty: { weather: V2, echo: toolPinHash(TOOLS.echo) } } },
    });
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.deepEqual(await toolNames(client), ['echo']);
      const err = await mcpRefusal(() => client.callTool({ name: 'weather', arguments: { city: 'Oslo' } }));
      assert.equal(err.code, -32602);
      assert.match(err.message, /does not match its pin in the gateway's config \(pinning\.pins\.shifty\.weather\)/);
      assert.equal((err.data as Json).rule, 'pinning.pins');
      assert.equal(await metric(gw, 'withheld'), 1);
      assert.equal(await metric(gw, 'pinned'), 0);
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('a change the upstream does not announce is caught by the next list, and calls follow it', async () => {
    const dir = freshDir();
    const gw = await startGateway({ upstreams: [shifty(join(dir, 'never'), {}, ['--shift-after-call', '--silent'])], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }] });
    const client = await connectClient(gw, 'streamable-http');
    try {
      assert.deepEqual(await toolNames(client), ['echo', 'weather']);
      // The first call turns the tool malicious without a word.
      assert.equal(textOf(await client.callTool({ name: 'weather', arguments: { city: 'Oslo' } })), 'sunny in Oslo (v1)');
      assert.deepEqual(await toolNames(client), ['echo']);
      const err = await mcpRefusal(() => client.callTool({ name: 'weather', arguments: { city: 'Oslo' } }));
      assert.equal((err.data as Json).code, 'SWB_TOOL_WITHHELD');
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('pinning off: nothing is withheld or recorded', async () => {
    const dir = freshDir();
    const shiftFile = join(dir, 'shift');
    const gw = await startGateway({ upstreams: [shifty(shiftFile)], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }], pinning: { mode: 'off' } });
    const { client, changed } = await watchedClient(gw);
    try {
      assert.equal(gw.app.gateway.pins, undefined);
      await toolNames(client);
      writeFileSync(shiftFile, '');
      await until('tools/list_changed', () => changed() >= 1);
      assert.deepEqual(await toolNames(client), ['echo', 'weather']);
      assert.equal(await metric(gw, 'pinned'), 0);
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('`pins approve` without pinning.file or Redis explains what it needs and exits 2', async () => {
    const dir = freshDir();
    const file = join(dir, 'config.yaml');
    writeFileSync(file, JSON.stringify({ upstreams: [shifty(join(dir, 'never'))], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }] }));
    const r = await cli(['pins', 'approve', '--config', file, 'shifty']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /approvals need .*pinning\.file.*Redis \(store\.redis or REDIS_URL\)/);
    const u = await cli(['pins', 'approve', '--config', file, 'nope']);
    assert.equal(u.code, 2);
    assert.match(u.stderr, /no upstream "nope"/);
  });
});

describe('tool pinning: a rug pull that adds a tool, odd names', () => {
  it('a tool that appears after the first listing is withheld as a new tool until `pins approve` names it', async () => {
    const dir = freshDir();
    const shiftFile = join(dir, 'shift');
    const pinsFile = join(dir, 'pins.json');
    const input = { upstreams: [shifty(shiftFile, {}, ['--add-tool'])], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }], pinning: { file: pinsFile } };
    const configFile = join(dir, 'config.yaml');
    writeFileSync(configFile, JSON.stringify(input));
    const lines: string[] = [];
    const gw = await startGateway(input, { logLines: lines });
    const { client, changed } = await watchedClient(gw);
    try {
      assert.deepEqual(await toolNames(client), ['echo', 'weather'], 'the first listing is the baseline: all of it is pinned');
      assert.equal(await metric(gw, 'pinned'), 2);
      writeFileSync(shiftFile, '');
      await until('tools/list_changed', () => changed() >= 1);
      assert.deepEqual(await toolNames(client), ['echo', 'weather'], 'the added tool is left out');
      const err = await mcpRefusal(() => client.callTool({ name: 'weather2', arguments: { city: 'Oslo', notes: 'secret' } }));
      assert.equal(err.code, -32602);
      assert.match(err.message, new RegExp(`Tool "weather2" of upstream "shifty" is withheld: it is a new tool, which appeared after the upstream's tools were pinned; an operator must approve it with "switchboard pins approve shifty weather2 --hash ${W2}"$`));
      assert.deepEqual(err.data, { code: 'SWB_TOOL_WITHHELD', upstream: 'shifty', tool: 'weather2', rule: 'pinning.withhold', newTool: true, pinnedSha256: null, sha256: W2 });
      assert.equal(await metric(gw, 'withheld'), 1);
      assert.deepEqual(pinAudit(lines, 'withheld').map((l) => [l.tool, l.pinnedSha256, l.sha256]), [['weather2', undefined, W2]]);
      assert.ok(lines.some((l) => /new tool appeared after the upstream was pinned: withheld/.test(l)));

      await until('the pending new tool in the pins file', () => existsSync(pinsFile) && readFileSync(pinsFile, 'utf8').includes(W2));
      const listed = await cli(['pins', 'list', '--config', configFile]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /^shifty\tweather2\tnone \(new tool\)\tstore$/m);
      assert.match(listed.stdout, new RegExp(`^  pending\\t${W2}\\tnew tool, first seen \\S+\\t"Better weather\\. <IMPORTANT>`, 'm'));
      // Rejected: out of the queue, still withheld, audited once; an approval naming it still releases it.
      // A bare reject rejects nothing (it rejected whatever was pending when it ran): it shows what is
      // pending and the command that rejects exactly that, as approve does.
      const bare = await cli(['pins', 'reject', '--config', configFile, 'shifty']);
      assert.equal(bare.code, 2, bare.stdout);
      assert.match(bare.stdout, new RegExp(`^pending shifty weather2 ${W2} \\(new tool\\) "Better weather\\. `, 'm'));
      assert.match(bare.stderr, new RegExp(`nothing rejected: .*run: switchboard pins reject --config FILE shifty --hash ${W2}\n$`));
      assert.doesNotMatch(bare.stdout, /^rejected/m);
      const stale = await cli(['pins', 'reject', '--config', configFile, 'shifty', 'weather2', '--hash', 'f'.repeat(64)]);
      assert.equal(stale.code, 1, stale.stdout);
      assert.match(stale.stderr, new RegExp(`shifty weather2: its pending definition ${W2} is not one you reviewed .*nothing rejected for it`));
      assert.match((await cli(['pins', 'list', '--config', configFile])).stdout, new RegExp(`^  pending\\t${W2}\\t`, 'm'), 'still pending');
      const rejected = await cli(['pins', 'reject', '--config', configFile, 'shifty', '--hash', W2]);
      assert.equal(rejected.code, 0, rejected.stderr);
      assert.match(rejected.stdout, new RegExp(`^rejected shifty weather2 ${W2} \\(new tool: stays withheld\\) `, 'm'));
      await until('the rejection audited', () => pinAudit(lines, 'rejected').length === 1);
      assert.deepEqual(pinAudit(lines, 'rejected').map((l) => [l.tool, l.pinnedSha256, l.sha256]), [['weather2', undefined, W2]]);
      assert.equal(await metric(gw, 'rejected'), 1);
      const relisted = await cli(['pins', 'list', '--config', configFile]);
      assert.match(relisted.stdout, new RegExp(`^  rejected\\t${W2}\\tnew tool, first seen `, 'm'));
      assert.doesNotMatch(relisted.stdout, /change\(s\) pending/);
      assert.equal((await cli(['pins', 'reject', '--config', configFile, 'shifty', 'weather2'])).stderr, `shifty weather2: its pending change ${W2} is rejected already\n`);
      assert.equal((await cli(['pins', 'approve', '--config', configFile, 'shifty'])).stdout, 'no changes pending\n', 'a rejected change is approved only by name');
      await mcpRefusal(() => client.callTool({ name: 'weather2', arguments: { city: 'Oslo' } }));
      const before = changed();
      const approved = await cli(['pins', 'approve', '--config', configFile, 'shifty', 'weather2', '--hash', W2]);
      assert.equal(approved.code, 0, approved.stderr);
      assert.match(approved.stdout, new RegExp(`^approved shifty weather2 ${W2} \\(new tool\\) `, 'm'));
      await until('tools/list_changed after the approval', () => changed() > before);
      assert.deepEqual(await toolNames(client), ['echo', 'weather', 'weather2']);
      assert.equal(textOf(await client.callTool({ name: 'weather2', arguments: { city: 'Oslo' } })), 'better: sunny in Oslo (v2)');
      await until('the approval metric', async () => (await metric(gw, 'approved')) === 1);
    } finally {
      await client.close();
      await gw.close();
    }
  });

  it('a tool named "__proto__" is pinned, survives the pins file and a restart, and is withheld when it changes', async () => {
    const dir = freshDir();
    const shiftFile = join(dir, 'shift');
    const pinsFile = join(dir, 'pins.json');
    const input = { upstreams: [shifty(shiftFile, {}, ['--proto-tool'])], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }], pinning: { file: pinsFile } };
    const first = await startGateway(input);
    const c1 = await connectClient(first, 'streamable-http');
    assert.deepEqual(await toolNames(c1), ['__proto__', 'echo', 'weather']);
    await until('the pins file', () => {
      try {
        return JSON.parse(readFileSync(pinsFile, 'utf8')).upstreams.shifty?.['__proto__']?.approved === P1;
      } catch {
        return false;
      }
    });
    await c1.close();
    await first.close();

    // A restart reads the file back: the pin must still be there (as a plain object it was lost).
    const gw = await startGateway(input);
    const { client, changed } = await watchedClient(gw);
    try {
      assert.deepEqual(await toolNames(client), ['__proto__', 'echo', 'weather']);
      assert.equal(textOf(await client.callTool({ name: '__proto__', arguments: {} })), 'proto v1');
      writeFileSync(shiftFile, '');
      await until('tools/list_changed', () => changed() >= 1);
      assert.deepEqual(await toolNames(client), ['echo', 'weather']);
      const err = await mcpRefusal(() => client.callTool({ name: '__proto__', arguments: {} }));
      assert.deepEqual(err.data, { code: 'SWB_TOOL_WITHHELD', upstream: 'shifty', tool: '__proto__', rule: 'pinning.withhold', pinnedSha256: P1, sha256: P2 });
    } finally {
      await client.close();
      await gw.close();
    }
  });

  for (const mode of ['withhold', 'off'] as const) {
    it(`list items whose name is not a non-empty string are left out and logged once (pinning ${mode})`, async () => {
      const dir = freshDir();
      const lines: string[] = [];
      const gw = await startGateway({ upstreams: [shifty(join(dir, 'never'), {}, ['--bad-names'])], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }], pinning: { mode } }, { logLines: lines });
      const client = await connectClient(gw, 'streamable-http');
      try {
        assert.deepEqual(await toolNames(client), ['echo', 'weather']);
        assert.deepEqual(await toolNames(client), ['echo', 'weather']);
        assert.equal(lines.filter((l) => /protocol violation: the upstream listed an item whose name is not a non-empty string/.test(l)).length, 1);
        if (mode === 'withhold') assert.equal(await metric(gw, 'pinned'), 2, 'only the named tools are pinned');
      } finally {
        await client.close();
        await gw.close();
      }
    });
  }
});

describe('tool pinning with Redis: two replicas share pins', () => {
  let redis: TestRedis;
  const dir = freshDir();
  const shiftFile = join(dir, 'shift');
  const configFile = join(dir, 'config.yaml');
  const gws: RunningGateway[] = [];
  const clients: Array<{ client: Client; changed: () => number }> = [];
  const lines: string[][] = [[], []];

  before(async () => {
    redis = await startRedis();
    const input = { store: { redis: { url: redis.url, keyPrefix: 'pintest:' } }, upstreams: [shifty(shiftFile)], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }] };
    writeFileSync(configFile, JSON.stringify(input));
    for (const l of lines) gws.push(await startGateway(input, { logLines: l }));
    for (const gw of gws) clients.push(await watchedClient(gw));
  });
  after(async () => {
    for (const c of clients) await c.client.close();
    for (const gw of gws) await gw.close();
    await redis?.stop();
  });

  it('first sight and the change are recorded once; the CLI approval reaches both replicas and is audited once', async () => {
    for (const { client } of clients) assert.deepEqual(await toolNames(client), ['echo', 'weather']);
    const firstSights = lines.flatMap((l) => pinAudit(l, 'pinned'));
    assert.equal(firstSights.length, 2, 'echo and weather pinned once between the two replicas');

    writeFileSync(shiftFile, '');
    for (const c of clients) await until('tools/list_changed', () => c.changed() >= 1);
    for (const { client } of clients) assert.deepEqual(await toolNames(client), ['echo']);
    assert.equal(lines.flatMap((l) => pinAudit(l, 'withheld')).length, 1, 'the change is reported by one replica');

    const listed = await cli(['pins', 'list', '--config', configFile]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^  pending\\t${V2}\\t`, 'm'));

    const before = clients.map((c) => c.changed());
    const approved = await cli(['pins', 'approve', '--config', configFile, '--all', '--hash', V2]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /^approved shifty weather /m);
    assert.match(approved.stdout, /written to Redis redis:\/\/127\.0\.0\.1:\d+\/? \(prefix "pintest:"\)/);
    for (const [i, c] of clients.entries()) await until(`tools/list_changed on replica ${i}`, () => c.changed() > before[i]!);
    for (const { client } of clients) assert.deepEqual(await toolNames(client), ['echo', 'weather']);
    await until('the approval audit line', () => lines.flatMap((l) => pinAudit(l, 'approved')).length >= 1);
    await sleep(200);
    assert.equal(lines.flatMap((l) => pinAudit(l, 'approved')).length, 1, 'one replica writes the audit line');
  });

  it('a tool added after the first listing is withheld on both replicas and reported once (the Lua script decides)', async () => {
    const d = freshDir();
    const shift = join(d, 'shift');
    const input = { store: { redis: { url: redis.url, keyPrefix: 'pintest-add:' } }, upstreams: [shifty(shift, {}, ['--add-tool'])], endpoints: [{ path: '/mcp', upstreams: ['shifty'] }] };
    const logs: string[][] = [[], []];
    const pair = [await startGateway(input, { logLines: logs[0] }), await startGateway(input, { logLines: logs[1] })];
    const watched = [await watchedClient(pair[0]!), await watchedClient(pair[1]!)];
    try {
      // Both replicas list for the first time at once: every tool of the first list is pinned, nothing withheld.
      const names = await Promise.all(watched.map((w) => toolNames(w.client)));
      assert.deepEqual(names, [['echo', 'weather'], ['echo', 'weather']]);
      assert.equal(logs.flatMap((l) => pinAudit(l, 'pinned')).length, 2);
      assert.equal(logs.flatMap((l) => pinAudit(l, 'withheld')).length, 0);
      writeFileSync(shift, '');
      for (const w of watched) await until('tools/list_changed', () => w.changed() >= 1);
      for (const w of watched) assert.deepEqual(await toolNames(w.client), ['echo', 'weather']);
      assert.deepEqual(logs.flatMap((l) => pinAudit(l, 'withheld')).map((l) => l.tool), ['weather2'], 'reported by one replica');
      const listed = await cli(['pins', 'list', '--config', writeConfig(d, input)]);
      assert.match(listed.stdout, /^shifty\tweather2\tnone \(new tool\)\tstore$/m);
    } finally {
      for (const w of watched) await w.client.close();
      for (const gw of pair) await gw.close();
    }
  });
});