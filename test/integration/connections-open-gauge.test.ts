// switchboard_connections_open must come back to 0 once every client connection is closed. A request whose
// token was still being verified (the key set being fetched) when its client went away was marked
// authenticated after its connection had closed: the gauge then read {authenticated} 1 and
// {unauthenticated} -1 for the life of the process, one more each time, and the unauthenticated
// connections in a request were no longer counted against server.maxUnauthenticatedConnections.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { openRawSocket } from '../helpers/raw-socket.js';
import { ISSUER, JwksServer, PUBLIC_URL, initializeBody, makeKey, rawRequest, signToken, type TestKey } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

/** The gauge's two series from one scrape. */
async function openConnections(gw: RunningGateway): Promise<{ authenticated: number; unauthenticated: number }> {
  const text = await (await fetch(gw.app.metricsUrl!)).text();
  const read = (state: string) => Number(new RegExp(`^switchboard_connections_open\\{state="${state}"\\} (-?\\d+)$`, 'm').exec(text)?.[1]);
  return { authenticated: read('authenticated'), unauthenticated: read('unauthenticated') };
}

describe('switchboard_connections_open', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('gauge');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], jwksUrl: jwks.url, tokenCache: { maxEntries: 0 } },
      tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
      upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
      endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
    });
  });
  after(async () => {
    jwks?.release();
    await gw?.close();
    await jwks?.close();
  });

  it('is back to 0 when a client left while its token was being verified', async () => {
    const token = await signToken(key);
    jwks.hold = true;
    const { port, hostname } = gw.url();
    const raw = await openRawSocket(hostname, Number(port));
    const body = JSON.stringify(initializeBody());
    raw.socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await until('the key set is being fetched for the request', () => jwks.held === 1);
    raw.socket.destroy();
    await until('the gateway saw the connection close', async () => {
      const c = await openConnections(gw);
      return c.authenticated + c.unauthenticated === 0;
    });
    jwks.release();
    // Answered once the key set is in: the first request's verification (the same fetch) has ended too.
    const headers: Array<[string, string]> = [['authorization', `Bearer ${token}`], ['content-type', 'application/json'], ['accept', 'application/json, text/event-stream'], ['connection', 'close']];
    assert.equal((await rawRequest(gw, 'POST', '/mcp', headers, body)).status, 200);
    await until('no client connection open', async () => {
      const c = await openConnections(gw);
      return c.authenticated + c.unauthenticated === 0;
    });
    assert.deepEqual(await openConnections(gw), { authenticated: 0, unauthenticated: 0 });
  });
});
