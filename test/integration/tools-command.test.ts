// `switchboard tools`: starts a config's upstreams (real child processes) and prints each endpoint's
// exposed tool names with the upstream tool they reach: renamed and shortened names marked.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';

const FIXTURE = resolve('test/fixtures/catalogue-server.mjs');

function config(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'swb-tools-')), 'config.yaml');
  writeFileSync(
    file,
    `upstreams:
  - { name: gh, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${FIXTURE}, --set, issues, --long] }
  - { name: fs, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${FIXTURE}, --set, files] }
endpoints:
  - path: /mcp
    upstreams: [gh, fs]
    tools:
      exposure: search
      exclude: [gh__delete_*]
      overrides: { fs__read_file: { name: read } }
      tenants: { anonymous: { exclude: [fs__move_*] } }
`,
  );
  return file;
}

function run(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'tools', ...args], { encoding: 'utf8', timeout: 60_000 });
}

describe('switchboard tools', () => {
  it('prints exposed name → upstream/tool per endpoint, renamed and shortened names marked', () => {
    const r = run(['--config', config()]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines[0], '/mcp (exposure search: tools/list shows search_tools and call_tool)');
    const rows = new Map(lines.slice(1).map((l) => l.trim().split(/\s{2,}/)).map(([name, target, how]) => [name!, `${target}${how ? ` ${how}` : ''}`]));
    assert.equal(rows.get('read'), 'fs/read_file (renamed)');
    assert.equal(rows.get('gh__create_issue'), 'gh/create_issue');
    assert.equal(rows.has('gh__delete_repository'), false, 'excluded');
    assert.equal(rows.get('fs__move_file'), 'fs/move_file', 'without --tenant: the endpoint’s own curation');
    const short = [...rows].filter(([, v]) => v.endsWith('(shortened)'));
    assert.deepEqual(short.map(([n]) => n.length), [64, 64]);
    assert.deepEqual(short.map(([, v]) => v.split(' ')[0]).sort(), ['gh/create_pull_request_review_comment_reply_in_thread_for_community', 'gh/create_pull_request_review_comment_reply_in_thread_for_enterprise']);
  });

  it('--json and --tenant: the tenant’s own curation, machine-readable', () => {
    const r = run(['--config', config(), '--tenant', 'anonymous', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const [endpoint] = JSON.parse(r.stdout);
    assert.equal(endpoint.endpoint, '/mcp');
    assert.equal(endpoint.exposure, 'search');
    const names = endpoint.tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes('read') && !names.includes('fs__move_file'));
    assert.deepEqual(endpoint.tools.find((t: { name: string }) => t.name === 'read'), { name: 'read', upstream: 'fs', tool: 'read_file', canonical: 'fs__read_file', how: 'renamed' });
  });

  it('an upstream that fails to start: the others’ tools printed, the failed one named, exit 1', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'swb-tools-')), 'config.yaml');
    writeFileSync(
      file,
      `upstreams:
  - { name: fs, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${FIXTURE}, --set, files], initTimeoutMs: 5000 }
  - { name: broken, transport: stdio, sandbox: none, command: /nonexistent/prog, initTimeoutMs: 5000 }
endpoints:
  - { path: /mcp, upstreams: [fs, broken] }
`,
    );
    const r = run(['--config', file]);
    assert.equal(r.status, 1, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /fs\/read_file/);
    assert.match(r.stderr, /\/mcp: upstream "broken" failed/);
    assert.doesNotMatch(r.stderr, /upstream "fs"/);
    const json = run(['--config', file, '--json']);
    assert.equal(json.status, 1);
    const [endpoint] = JSON.parse(json.stdout);
    assert.deepEqual(endpoint.failed.map((f: { upstream: string }) => f.upstream), ['broken']);
    assert.ok(endpoint.tools.some((t: { upstream: string }) => t.upstream === 'fs'));
  });

  it('names the tools left out: a name a rename or a meta-tool took, a name that breaks the MCP rule (found by a review)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-tools-'));
    const tools = join(dir, 'tools.json');
    writeFileSync(tools, JSON.stringify([{ name: 'search_tools', inputSchema: { type: 'object' } }, { name: 'bad name', inputSchema: { type: 'object' } }]));
    const file = join(dir, 'config.yaml');
    // One upstream, unprefixed: read_file's rename takes move_file's own name.
    writeFileSync(
      file,
      `upstreams:\n  - { name: fs, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${FIXTURE}, --set, files, --tools, ${tools}] }\nendpoints:\n  - { path: /mcp, upstreams: [fs], tools: { exposure: search, overrides: { read_file: { name: move_file } } } }\n`,
    );
    const r = run(['--config', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ {2}move_file +fs\/read_file +\(renamed\)$/m);
    assert.match(r.stdout, /^ {2}left out: fs\/move_file \(its name is taken by a rename or a search meta-tool\)$/m);
    assert.match(r.stdout, /^ {2}left out: fs\/search_tools \(its name is taken by a rename or a search meta-tool\)$/m);
    assert.match(r.stdout, /^ {2}left out: fs\/"bad name" \(its name breaks the MCP name rule\)$/m);
    const [endpoint] = JSON.parse(run(['--config', file, '--json']).stdout);
    assert.deepEqual(endpoint.leftOut, [
      { upstream: 'fs', tool: 'move_file', canonical: 'move_file', why: 'name taken' },
      { upstream: 'fs', tool: 'search_tools', canonical: 'search_tools', why: 'name taken' },
      { upstream: 'fs', tool: 'bad name', canonical: 'bad name', why: 'name rule' },
    ]);
  });

  for (const signal of ['SIGINT', 'SIGHUP'] as const) {
  it(`${signal === 'SIGINT' ? 'Ctrl-C (SIGINT)' : 'a closed terminal (SIGHUP)'} while an upstream is starting stops that upstream, not only the command`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-tools-'));
    const pidFile = join(dir, 'pid');
    // Never answers initialize, and outlives its stdin's end (as a slow or careless server does); its own process group.
    const script = "require('fs').writeFileSync(process.argv[1], String(process.pid)); process.stdin.resume(); setInterval(() => {}, 1000)";
    const file = join(dir, 'config.yaml');
    writeFileSync(file, `upstreams:\n  - { name: slow, transport: stdio, sandbox: none, command: ${process.execPath}, args: [-e, ${JSON.stringify(script)}, ${pidFile}] }\nendpoints: [{ path: /mcp, upstreams: [slow] }]\n`);
    const cli = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'tools', '--config', file], { stdio: 'ignore' });
    const exited = new Promise<number | null>((r) => cli.on('exit', (code) => r(code)));
    for (let i = 0; i < 300 && !existsSync(pidFile); i++) await sleep(100);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      assert.ok(alive());
      cli.kill(signal);
      assert.notEqual(await exited, 0);
      for (let i = 0; i < 50 && alive(); i++) await sleep(100);
      assert.equal(alive(), false, 'the upstream outlived the command');
    } finally {
      if (alive()) process.kill(pid, 'SIGKILL');
    }
  });
  }

  it('refuses a tenant the config does not have', () => {
    const r = run(['--config', config(), '--tenant', 'nosuch']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no tenant "nosuch" in .*config\.yaml \(tenants: anonymous\)/);
    assert.equal(r.stdout, '');
  });

  it('needs a config', () => {
    const r = run([]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--config FILE is required/);
  });
});
