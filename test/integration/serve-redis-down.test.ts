// `serve` with store.redis naming a Redis that does not answer: the gateway waits for it before it
// listens (it joins the replica group first). It said nothing while it waited: an operator saw a
// process that never listened and a log with no line about why.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { startServe } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

describe('serve while Redis cannot be reached', { timeout: 90_000 }, () => {
  it('says so in its log (the URL without its password), and still stops on SIGTERM', async () => {
    // A loopback port nothing listens on.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const s = startServe(
      'swb-redis-down-',
      `store: { redis: { url: "redis://gw:s3cret-pw@127.0.0.1:${port}" } }
upstreams:
  - { name: echo, transport: stdio, sandbox: none, command: ${process.execPath}, args: [${resolve('deploy/examples/echo-server.mjs')}] }
endpoints: [{ path: /mcp, upstreams: [echo] }]
`,
    );
    try {
      const said = await waitFor(() => s.log().split('\n').find((l) => /redis/i.test(l) && /"level":40/.test(l)), { timeoutMs: 30_000 });
      assert.ok(said, `no warning about Redis while waiting for it: ${s.log()}`);
      assert.match(said, new RegExp(`127\\.0\\.0\\.1:${port}`));
      assert.doesNotMatch(s.log(), /s3cret-pw/);
      assert.doesNotMatch(s.log(), /switchboard listening/);
    } finally {
      s.child.kill('SIGTERM');
    }
    assert.equal((await s.exited).code, 0);
  });
});
