#!/usr/bin/env node
// Runs the official conformance suite against the gateway fronting test/fixtures/conformance-server.mjs
// over stdio, once per sharing mode. Exits non-zero when any active scenario fails.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const suite = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');
const extra = process.argv.slice(2);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitReady(url, deadline) {
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gateway not ready at ${url}`);
}

async function runMode(sharing) {
  const port = await freePort();
  const gw = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'main.ts'), 'serve', '--config', join(here, 'gateway.yaml')], {
    cwd: root,
    env: { ...process.env, SWITCHBOARD_PORT: String(port), CONFORMANCE_SHARING: sharing, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, Date.now() + 30_000);
    const code = await new Promise((resolve) => {
      const c = spawn(process.execPath, [suite, 'server', '--url', `http://127.0.0.1:${port}/mcp`, ...extra], { stdio: 'inherit', cwd: root });
      c.on('exit', (code) => resolve(code ?? 1));
    });
    console.log(`conformance (${sharing}): exit ${code}`);
    return code;
  } finally {
    gw.kill('SIGTERM');
    await new Promise((r) => gw.once('exit', r));
  }
}

let failed = 0;
for (const mode of ['shared', 'per-session']) if ((await runMode(mode)) !== 0) failed++;
process.exit(failed === 0 ? 0 : 1);
