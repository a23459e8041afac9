// A request the front door refuses (no token, a bad one, a tenant not granted the endpoint) while its
// client still uploads its body. The refusal was sent and the connection closed at once, before the body
// was read: the rest of the upload then met a reset, and a client that writes its whole body before it
// reads the answer (Python's http.client, under urllib and requests) got BrokenPipeError for a body of a few MiB (more than the sockets' buffers hold),
// never the 401 that tells it to renew its token. Now a body within server.maxBodyBytes is read (and
// dropped) before the refusal is sent, so every such client reads the answer.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { ISSUER, JwksServer, makeKey, PUBLIC_URL } from '../helpers/tokens.js';

const PYTHON = ['/usr/bin/python3', '/bin/python3'].find((p) => existsSync(p));
const SIZE = 8 * 1024 * 1024;
const TRIES = 5;

// Writes the whole body, then reads the answer: what http.client does (sendall, then getresponse).
const PY = `
import http.client, sys
out = []
for i in range(int(sys.argv[4])):
    c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=20)
    try:
        c.request('POST', '/mcp', body=b'{' * int(sys.argv[3]), headers={'content-type': 'application/json', 'accept': 'application/json, text/event-stream'})
        r = c.getresponse()
        out.append(str(r.status) + ('+challenge' if r.getheader('www-authenticate') else ''))
    except Exception as e:
        out.append(type(e).__name__)
    c.close()
print(','.join(out))
`;

/** A client that writes all of its body before reading: the status it read, or the error that met its upload. */
function uploadThenRead(port: number, size: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    let failed: string | undefined;
    s.on('error', (e: NodeJS.ErrnoException) => (failed ??= e.code ?? e.message));
    s.on('close', () => resolve(failed ?? text.split('\r\n')[0]!));
    s.once('connect', () => {
      s.pause(); // reads nothing until the body is written
      s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      s.write(Buffer.alloc(size, 0x7b), () => {
        if (failed) return s.destroy();
        s.on('data', (b) => (text += b.toString()));
        s.resume();
      });
    });
  });
}

describe('a refused request whose client still uploads its body', () => {
  let jwks: JwksServer;
  let gw: RunningGateway;
  let port: number;

  before(async () => {
    const key = await makeKey('k1');
    jwks = await JwksServer.start([key.publicJwk]);
    gw = await startGateway({
      server: { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL, maxBodyBytes: 16 * 1024 * 1024 },
      auth: { mode: 'jwt', issuer: ISSUER, jwksUrl: jwks.url },
      tenants: [{ name: 'acme', endpoints: ['*'] }],
      upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE }],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    port = Number(gw.url().port);
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  it('Python http.client (writes all, then reads) gets the 401 and its challenge for an 8 MiB body (within maxBodyBytes)', { skip: !PYTHON && 'needs python3' }, async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON!, ['-c', PY, '127.0.0.1', String(port), String(SIZE), String(TRIES)], (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim()))),
    );
    assert.equal(out, Array(TRIES).fill('401+challenge').join(','));
  });

  it('a client that reads only once its body is written reads the 401, its upload never reset', async () => {
    for (let i = 0; i < TRIES; i++) assert.equal(await uploadThenRead(port, SIZE), 'HTTP/1.1 401 Unauthorized');
  });

  it('a body declared larger than server.maxBodyBytes is not read: refused and closed at once, as before', async () => {
    const status = await uploadThenRead(port, 64 * 1024 * 1024);
    assert.notEqual(status, 'HTTP/1.1 401 Unauthorized');
  });
});
