// Upstream tokens shorter-lived than the refresh skew are still cached (a real token endpoint on a
// loopback port counts the fetches): they were fetched again for every request.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { renewAt } from '../../../src/upstream/bearer-source.js';
import { ClientCredentials } from '../../../src/upstream/client-credentials.js';

describe('renewAt', () => {
  it('renews skewMs before expiry, never earlier than half the life, and keeps no expired token', () => {
    assert.equal(renewAt(1000, 3_600_000, 60_000), 1000 + 3_540_000);
    assert.equal(renewAt(1000, 60_000, 60_000), 1000 + 30_000);
    assert.equal(renewAt(1000, 10_000, 60_000), 1000 + 5_000);
    assert.equal(renewAt(1000, 0, 60_000), 1000);
    assert.ok(renewAt(1000, -5_000, 60_000) <= 1000);
  });
});

describe('ClientCredentials against a token endpoint', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  let expiresIn = 60;
  const agent = new Agent();
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        fetches++;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ access_token: `t${fetches}`, token_type: 'Bearer', expires_in: expiresIn }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  after(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a token living exactly the skew (60 s, the default) is fetched once for several requests', async () => {
    fetches = 0;
    expiresIn = 60;
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
    const tokens = [await cc.token(), await cc.token(), await cc.token()];
    assert.deepEqual(tokens, ['t1', 't1', 't1']);
    assert.equal(fetches, 1);
  });

  it('a token already expired (expires_in 0) is not reused', async () => {
    fetches = 0;
    expiresIn = 0;
    const cc = new ClientCredentials({ type: 'client-credentials', tokenUrl: url, clientId: 'gw', clientSecret: 's', refreshSkewMs: 60_000 } as never, agent, 60_000);
    await cc.token();
    await cc.token();
    assert.equal(fetches, 2);
  });
});
