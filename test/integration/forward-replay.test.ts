// A forward between replicas is signed (x-switchboard-forward, ±30 s), and a believed forward is not
// charged to the tenant's rate again by the owner (nor forwarded again). Nothing stopped the same signed
// request (header and body) from being sent again, any number of times within the 30 s, by whoever saw it
// pass between the replicas: each one believed, run, and free of the rate. A signature is now believed
// once on the replica it names; a repeat is an ordinary client request, counted as 'replayed'.
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { everythingUpstream, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawPost as post, rawSession } from '../helpers/raw-mcp.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

interface Captured {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends a captured request again, as it was, straight to `port`. */
function resend(port: number, c: Captured): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const { connection: _hop, ...headers } = c.headers;
    const r = request({ host: '127.0.0.1', port, method: c.method, path: c.url, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    r.on('error', reject);
    r.end(c.body);
  });
}

describe('a forward between replicas sent again by someone who saw it', { timeout: 90_000 }, () => {
  let redis: TestRedis;
  let owner: RunningGateway;
  let other: RunningGateway;
  let ownerPort = 0;
  // Between the replicas: records each forward and passes it on to the owner.
  let wire: Server;
  const seen: Captured[] = [];

  before(async () => {
    redis = await startRedis();
    wire = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d));
      req.on('end', () => {
        const c = { method: req.method!, url: req.url!, headers: req.headers, body };
        if (req.headers['x-switchboard-forward'] !== undefined) seen.push(c);
        const out = request({ host: '127.0.0.1', port: ownerPort, method: c.method, path: c.url, headers: c.headers }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        });
        out.on('error', () => res.destroy());
        out.end(body);
      });
    });
    await new Promise<void>((r) => wire.listen(0, '127.0.0.1', r));
    const wireUrl = `http://127.0.0.1:${(wire.address() as AddressInfo).port}`;
    // A burst of 3 and a rate that adds no token during the test.
    const config = (advertiseUrl?: string) => ({
      store: { redis: { url: redis.url, forwardSecret: 'f'.repeat(40), ...(advertiseUrl ? { advertiseUrl } : {}) } },
      tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.001, burst: 3 } }],
      upstreams: [everythingUpstream('everything', 'shared')],
      endpoints: [{ path: '/mcp', upstreams: ['everything'] }],
    });
    owner = await startGateway(config(wireUrl));
    ownerPort = Number(new URL(owner.base).port);
    other = await startGateway(config());
  });
  after(async () => {
    await other?.close();
    await owner?.close();
    wire?.closeAllConnections();
    wire?.close();
    await redis?.stop();
  });

  it('is believed once: the repeat is an ordinary client request (refused for the rate), counted as replayed', async () => {
    const sid = await rawSession(owner.base); // 1 token
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } });
    const forwarded = await post(other.base, call(2), sid); // 1 token, taken by the replica asked
    assert.equal(forwarded.status, 200, forwarded.text);
    assert.equal(seen.length, 1, 'the forward went over HTTP, through the wire');
    assert.equal((await post(owner.base, call(3), sid)).status, 200); // the last token
    assert.equal((await post(owner.base, call(4), sid)).status, 429, 'the tenant has no token left');

    const again = await resend(ownerPort, seen[0]!);
    assert.equal(again.status, 429, `the replayed forward was believed (served free of the rate): ${again.status} ${again.text}`);
    assert.equal((await resend(ownerPort, seen[0]!)).status, 429);
    const metrics = await (await fetch(owner.app.metricsUrl!)).text();
    assert.match(metrics, /^switchboard_cluster_untrusted_forwards_total\{reason="replayed"\} 2$/m);
  });
});
