#!/usr/bin/env node
/**
 * `node test/bench/tools/collect-corpus.mjs [--only name,name] [--out file] [--keep]`
 *
 * Builds the tool-search corpus from real, published MCP servers: each server in SERVERS is installed
 * at its exact version into its own scratch folder, started over stdio with the official SDK client,
 * and its tools/list is paged to the end. The definitions are written exactly as listed to
 * test/fixtures/tool-corpus/corpus.json, which is checked in so the bench never needs the network.
 *
 * Collected servers replace their entry in the existing file; a server that fails keeps its previous
 * entry (which records its own version) and the run exits non-zero. With --only, just the named servers
 * are collected: a retry after one failure should not cost a full run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import { LEFT_OUT, SERVERS } from './corpus-servers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DEFAULT_OUT = join(ROOT, 'test/fixtures/tool-corpus/corpus.json');
const START_TIMEOUT_MS = 90_000;

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    out: { type: 'string', default: DEFAULT_OUT },
    keep: { type: 'boolean', default: false },
  },
});
const log = (s) => void process.stderr.write(`${s}\n`);

/**
 * Install scripts are skipped: the ones these packages carry fetch browsers or prebuilt binaries from
 * hosts other than the npm registry, and listing tools needs neither (nor should a package we only
 * inspect run code at install time).
 */
function install(spec, dir) {
  const argv = ['install', '--prefix', dir, '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', '--loglevel=error'];
  execFileSync('npm', [...argv, `${spec.package}@${spec.version}`], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The script the package's `bin` names (the one chosen by `spec.bin` when it has several). */
function binPath(spec, dir) {
  const pkgDir = join(dir, 'node_modules', spec.package);
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const bin = manifest.bin;
  if (typeof bin === 'string') return { path: join(pkgDir, bin), version: manifest.version };
  const key = spec.bin ?? Object.keys(bin ?? {})[0];
  if (!bin?.[key]) throw new Error(`${spec.package} has no bin ${key ?? ''}`);
  return { path: join(pkgDir, bin[key]), version: manifest.version };
}

/**
 * A scrubbed environment: the servers see a scratch HOME (some write config or caches there) and only
 * the dummy credentials they insist on to start. None of these values is a real secret.
 */
function serverEnv(spec, vars) {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(vars.work, 'home'), NODE_NO_WARNINGS: '1' };
  for (const [k, v] of Object.entries(spec.env ?? {})) env[k] = fill(v, vars);
  return env;
}

const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => vars[k] ?? m);

async function freePort() {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

/** Resolves once the port accepts a connection: redis-server says nothing useful on stdout to wait for. */
async function waitForPort(port, child) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const ok = await new Promise((res) => {
      const sock = createConnection({ port, host: '127.0.0.1' }, () => {
        sock.end();
        res(true);
      });
      sock.on('error', () => res(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A throwaway redis-server on loopback for servers that connect at start (no persistence, no config). */
async function startRedis(dir) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  await waitForPort(port, child);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  return { url: `redis://127.0.0.1:${port}`, stop };
}

/**
 * Deliberately not client.listTools(): the SDK validates each definition and rejects the whole page when
 * one is off-spec (server-gitlab lists a tool whose inputSchema lacks type "object"). The corpus keeps
 * what servers really send, off-spec parts included, since that is what a gateway has to index.
 */
const RawListResult = z.object({ tools: z.array(z.unknown()), nextCursor: z.string().optional() }).passthrough();

async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const params = cursor ? { cursor } : {};
    const page = await client.request({ method: 'tools/list', params }, RawListResult, { timeout: START_TIMEOUT_MS });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * Each server runs under bubblewrap in a minimal, made-up host: /usr and /etc read-only, its scratch
 * folder, fresh /proc, /dev and /tmp, its own pid/uts/ipc namespaces and a fixed hostname; the network
 * is shared (loopback redis). Some servers write the host into their tool descriptions
 * (desktop-commander detects a container from /.dockerenv and /proc, then lists the host's mounts), and
 * a fixture must neither depend on nor reveal the machine it was collected on.
 */
function sandboxed(argv, work) {
  const host = ['--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc'];
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) host.push('--symlink', `usr/${link}`, `/${link}`);
  const isolation = ['--unshare-pid', '--unshare-uts', '--unshare-ipc', '--unshare-cgroup-try', '--hostname', 'mcp-corpus', '--die-with-parent'];
  const files = ['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', work, work, '--chdir', join(work, 'cwd')];
  return { command: 'bwrap', args: [...isolation, ...host, ...files, '--', ...argv] };
}

/** Starts one installed server, lists its tools and stops it; the server's stderr tail explains a failure. */
async function listTools(spec, script, vars) {
  const transport = new StdioClientTransport({
    ...sandboxed([process.execPath, script, ...(spec.args ?? []).map((a) => fill(a, vars))], vars.work),
    env: serverEnv(spec, vars),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => void (stderr = (stderr + d).slice(-2000)));
  const client = new Client({ name: 'switchboard-corpus-collector', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: START_TIMEOUT_MS });
    return { tools: await listAll(client), serverInfo: client.getServerVersion() };
  } catch (err) {
    throw new Error(`${err.message}\n--- server stderr (tail) ---\n${stderr.trim()}`);
  } finally {
    await client.close().catch(() => {});
  }
}

async function collectOne(spec) {
  const work = mkdtempSync(join(tmpdir(), `swb-corpus-${spec.name}-`));
  for (const sub of ['home', 'cwd', 'data']) mkdirSync(join(work, sub));
  for (const [rel, text] of Object.entries(spec.files ?? {})) writeFileSync(join(work, rel), text);
  const started = performance.now();
  let redis;
  try {
    install(spec, join(work, 'pkg'));
    const bin = binPath(spec, join(work, 'pkg'));
    const installedMs = performance.now() - started;
    if (spec.needsRedis) redis = await startRedis(join(work, 'data'));
    const { tools, serverInfo } = await listTools(spec, bin.path, { work, redis: redis?.url });
    const listedMs = performance.now() - started - installedMs;
    log(`  ${spec.name}: ${tools.length} tools (install ${(installedMs / 1000).toFixed(1)} s, start+list ${(listedMs / 1000).toFixed(1)} s)`);
    return { name: spec.name, package: spec.package, version: bin.version, domain: spec.domain, serverInfo, start: describeStart(spec), tools };
  } finally {
    await redis?.stop();
    if (!args.keep) rmSync(work, { recursive: true, force: true });
  }
}

/** How the server was started, with scratch paths shown as placeholders so the fixture is reproducible. */
function describeStart(spec) {
  return { args: spec.args ?? [], env: Object.keys(spec.env ?? {}) };
}

/**
 * Indented JSON except that each tool definition stays on one line: half the size of fully indented
 * output (some servers' schemas are deeply nested), and a re-collection still diffs tool by tool.
 */
function serialize(corpus) {
  const TOOL = '\u0000tool';
  const placeholders = [];
  const shallow = {
    ...corpus,
    servers: corpus.servers.map((s) => ({ ...s, tools: s.tools.map((t) => `${TOOL}${placeholders.push(JSON.stringify(t)) - 1}`) })),
  };
  const text = JSON.stringify(shallow, null, 2).replace(/"\\u0000tool(\d+)"/g, (_, i) => placeholders[Number(i)]);
  return `${text}\n`;
}

function readExisting(out) {
  try {
    return JSON.parse(readFileSync(out, 'utf8'));
  } catch {
    return { servers: [] };
  }
}

async function main() {
  const only = args.only?.split(',').filter(Boolean);
  const chosen = only ? SERVERS.filter((s) => only.includes(s.name)) : SERVERS;
  if (only && chosen.length !== only.length) throw new Error(`unknown server in --only: ${only.join(',')}`);
  const order = SERVERS.map((s) => s.name);
  const previous = readExisting(args.out).servers.filter((s) => order.includes(s.name));
  const collected = new Map(previous.map((s) => [s.name, s]));
  const failures = [];
  const t0 = performance.now();
  for (const spec of chosen) {
    log(`collecting ${spec.name} (${spec.package}@${spec.version})`);
    try {
      collected.set(spec.name, await collectOne(spec));
    } catch (err) {
      failures.push({ name: spec.name, package: spec.package, version: spec.version, error: String(err.message ?? err) });
      log(`  ${spec.name} FAILED: ${err.message}`);
    }
  }
  const servers = [...collected.values()].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const host = 'each server under bubblewrap: /usr and /etc read-only, a scratch folder, hostname mcp-corpus, no credentials';
  const corpus = { collectedAt: new Date().toISOString(), collector: 'test/bench/tools/collect-corpus.mjs', node: process.version, host, servers, leftOut: LEFT_OUT };
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, serialize(corpus));
  const total = servers.reduce((n, s) => n + s.tools.length, 0);
  log(`wrote ${args.out}: ${servers.length} servers, ${total} tools in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  for (const f of failures) log(`failed: ${f.name} (${f.package}@${f.version}): ${f.error.split('\n')[0]}`);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

await main();
