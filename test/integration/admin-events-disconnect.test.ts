// A console that goes away while its /events request is still being authenticated (found by a review):
// the admin hook verifies a JWT before the stream is opened, and a key set fetched from the identity
// provider can take seconds. A client that closed meanwhile was still registered as an open stream (its
// 'close' had already fired): never dropped, it held one of the 16 stream slots for good, so a few such
// reconnects locked every console out (503) until a restart. Real gateway, real JWKS server, real sockets.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MAX_STREAMS } from '../../src/admin/admin-events.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { events, type Events } from '../helpers/admin-events.js';
import { ISSUER, makeKey, PUBLIC_URL, signToken, type TestKey } from '../helpers/tokens.js';
import { once, until } from '../helpers/wait.js';

/** A JWKS endpoint that holds its answers until released: the admin hook's verification waits on it. */
async function heldJwks(key: TestKey): Promise<{ url: string; asked: () => number; release: () => void; close: () => Promise<void> }> {
  let asked = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const server: Server = createServer((_req, res) => {
    asked++;
    void released.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.publicJwk] })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    asked: () => asked,
    release,
    close: () => (server.closeAllConnections(), new Promise<void>((r) => server.close(() => r()))),
  };
}

/** GET /events sent over a raw socket, left waiting for its answer. */
function askEvents(admin: URL, token: string): Socket {
  const socket = connect(Number(admin.port), admin.hostname, () => {
    socket.write(`GET /events HTTP/1.1\r\nhost: ${admin.host}\r\nauthorization: Bearer ${token}\r\n\r\n`);
  });
  socket.on('error', () => {});
  return socket.resume();
}

describe('admin /events: a console that left during authentication', () => {
  let gw: RunningGateway;
  let jwks: Awaited<ReturnType<typeof heldJwks>>;
  let token: string;
  const streams: Events[] = [];

  before(async () => {
    const key = await makeKey('k1');
    jwks = await heldJwks(key);
    gw = await startGateway({
      admin: { enabled: true, host: '127.0.0.1', port: 0 },
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'ops', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    token = await signToken(key, { tenant: 'ops', sub: 'alice', scope: 'switchboard:admin' });
  });
  after(async () => {
    for (const s of streams) s.close();
    await gw?.close();
    await jwks?.close();
  });

  it('does not keep its stream: every slot is free again for the consoles that come next', async () => {
    const admin = new URL(gw.app.adminUrl!);
    const before = jwks.asked();
    const socket = askEvents(admin, token);
    const closed = once(socket, 'close');
    // The admin hook is verifying the token (its key set is being fetched) when the client hangs up; the
    // gateway closes its side of the connection in turn.
    await until('the admin hook to fetch the key set', () => jwks.asked() > before);
    socket.end();
    await closed;
    jwks.release();
    for (let i = 0; i < MAX_STREAMS; i++) {
      const r = await events(gw.app.adminUrl!, token);
      assert.equal(r.status, 200, `console ${i + 1} of ${MAX_STREAMS}: ${r.body}`);
      streams.push(r.stream!);
      await until(`console ${i + 1}'s views`, () => r.stream!.seen.some((e) => e.event === 'pins'));
    }
  });
});
