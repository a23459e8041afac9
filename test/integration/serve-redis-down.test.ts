// `serve` with store.redis naming a Redis that does not answer: the gateway waits for it before it
// listens (it joins the replica group first). It said nothing while it waited: an operator saw a
// process that never listened and a log with no line about why.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

describe('serve while Redis cannot be reached', { timeout: 90_000 }, () => {
  it('says so in its log (the URL without its password), and still stops on SIGTERM', async () => {
    // A loopback port nothing listens on.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const dir = mkdtempSync(join(tmpdir(), 'swb-redis-down-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      `server: { host: 127.0.0.1, port: 0 }
metrics: { enabled: false }
auth: { mode: none }
store: { redis: { url: "redis://gw:s3cret-pw@127.0.0.1:${port}" } }
upstreams:
  - { name: echo, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${resolve('deploy/examples/echo-server.mjs')}] }
endpoints: [{ path: /mcp, upstreams: [echo] }]
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', file], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    let log = '';
    child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
    try {
      const said = await new Promise<string | undefined>((done) => {
        const t = setTimeout(() => done(undefined), 30_000);
        child.stdout!.on('data', (b: Buffer) => {
          log += b.toString();
          const line = log.split('\n').find((l) => /redis/i.test(l) && /"level":40/.test(l));
          if (line) {
            clearTimeout(t);
            done(line);
          }
        });
      });
      assert.ok(said, `no warning about Redis while waiting for it: ${log}`);
      assert.match(said, new RegExp(`127\\.0\\.0\\.1:${port}`));
      assert.doesNotMatch(log, /s3cret-pw/);
      assert.doesNotMatch(log, /switchboard listening/);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});
