// File-descriptor exhaustion by unauthenticated clients (issue 13.1), with real sockets: clients that
// send POST headers announcing a body and then nothing, bodies dripped slowly, silent connections, more
// connections than the caps allow, a client slow to send its request while the unauthenticated cap is
// exceeded; and, as the acceptance criterion, a gateway process under
// `ulimit -n 1024` that keeps serving an authenticated client while 2,000 idle connections press on it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { descriptorLimit } from '../../src/edge/connection-limits.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { attacker } from '../helpers/idle-attacker.js';
import { listeningAddress } from '../helpers/processes.js';
import { ACCEPT_BOTH, ISSUER, PUBLIC_URL, connectWithToken, initializeBody, makeKey, openSession, signToken } from '../helpers/tokens.js';
import { until as waitUntil } from '../helpers/wait.js';

const fixture = { name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const };

interface Exchange {
  /** Everything the gateway sent before it closed the connection. */
  data: string;
}

/**
 * A raw connection that writes `head` (and then one byte every `dripMs`, when given) and resolves once the
 * gateway closes it, with what it sent; rejects when the gateway still holds it after `deadlineMs`.
 */
function exchange(port: number, head: string, o: { deadlineMs: number; dripMs?: number }): Promise<Exchange> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let drip: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway still held the connection after ${o.deadlineMs} ms; it sent: ${JSON.stringify(data.slice(0, 200))}`));
    }, o.deadlineMs);
    socket.on('connect', () => {
      socket.write(head);
      if (o.dripMs) drip = setInterval(() => socket.writable && socket.write('x'), o.dripMs);
    });
    socket.on('data', (b: Buffer) => (data += b.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(deadline);
      clearInterval(drip);
      resolvePromise({ data });
    });
  });
}

function postHead(token: string | undefined, contentLength: number, path = '/mcp'): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: ${ACCEPT_BOTH}\r\n` +
    (token ? `Authorization: Bearer ${token}\r\n` : '') +
    `Content-Length: ${contentLength}\r\n\r\n`
  );
}

async function refused(gw: RunningGateway, reason: string): Promise<number> {
  return (await gw.app.metrics.connectionsRefused.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/** Polls `cond` until it holds, at most `ms` (the shared helper, arguments in this file's order). */
const until = (cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> => waitUntil(what, cond, ms);

/** A gateway with a static key of a temporary folder and the given `server` limits, and a valid token. */
async function startLimitedGateway(server: Record<string, unknown>): Promise<{ dir: string; token: string; gw: RunningGateway; port: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'swb-conn-'));
  const key = await makeKey('k1');
  writeFileSync(join(dir, 'key.pem'), key.spki);
  const token = await signToken(key, { aud: PUBLIC_URL, kid: null });
  const gw = await startGateway({
    server: { publicUrl: PUBLIC_URL, ...server },
    auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.pem')] },
    tenants: [{ name: 'acme', endpoints: ['/mcp'] }],
    upstreams: [fixture],
    endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
  });
  return { dir, token, gw, port: Number(new URL(gw.base).port) };
}

describe('connection limits: what an unauthenticated client can hold', () => {
  let dir: string;
  let token: string;
  let gw: RunningGateway;
  let port: number;

  before(async () => {
    ({ dir, token, gw, port } = await startLimitedGateway({ headersTimeoutMs: 1000, bodyTimeoutMs: 2000, bodyIdleTimeoutMs: 300, keepAliveMs: 1000, maxConnections: 64, maxUnauthenticatedConnections: 16 }));
  });

  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('POST headers announcing a body, no token, no body: 401 from the headers alone, and the connection closed', async () => {
    const replies = await Promise.all(Array.from({ length: 200 }, () => exchange(port, postHead(undefined, 100), { deadlineMs: 10_000 })));
    for (const r of replies) {
      assert.match(r.data, /^HTTP\/1\.1 401 /, r.data.slice(0, 200));
      assert.match(r.data, /www-authenticate: Bearer/i);
      assert.match(r.data, /connection: close/i);
    }
  });

  it('the same on the legacy message path and with a forged token', async () => {
    for (const [tok, path] of [['not.a.jwt', '/mcp'], [undefined, '/messages?sessionId=x']] as const) {
      const r = await exchange(port, postHead(tok, 100, path), { deadlineMs: 10_000 });
      assert.match(r.data, /^HTTP\/1\.1 401 /, r.data.slice(0, 200));
    }
  });

  it('with a valid token, a body that stops arriving is cut after the body-idle timeout', async () => {
    const before = await refused(gw, 'body_idle');
    const r = await exchange(port, `${postHead(token, 100)}{"jsonrpc":`, { deadlineMs: 10_000 });
    assert.equal(r.data, '', 'nothing answered: the connection is simply cut');
    assert.equal(await refused(gw, 'body_idle'), before + 1);
  });

  it('with a valid token, a body dripped a byte at a time is cut at the body deadline (408)', async () => {
    const r = await exchange(port, postHead(token, 100_000), { deadlineMs: 15_000, dripMs: 100 });
    assert.match(r.data, /^HTTP\/1\.1 408 /, r.data.slice(0, 200));
  });

  it('a connection that sends nothing is closed after the headers timeout', async () => {
    const r = await exchange(port, '', { deadlineMs: 10_000 });
    assert.match(r.data, /^(HTTP\/1\.1 408 |)/);
  });

  it('an SSE stream outlives the header and body deadlines', async () => {
    const sid = await openSession(gw, token);
    const ac = new AbortController();
    const res = await fetch(gw.url(), { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-session-id': sid }, signal: ac.signal });
    assert.equal(res.status, 200);
    // Keep-alive comments every second: the fourth arrives well after both deadlines (1 s, 2 s) passed.
    const reader = res.body!.getReader();
    let seen = 0;
    let text = '';
    while (seen < 4) {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'the stream was cut');
      text += Buffer.from(value!).toString();
      seen = text.split(': keepalive').length - 1;
    }
    ac.abort();
  });

  it('unauthenticated connections over their cap: the oldest idle ones are closed, an authenticated client is served', async () => {
    const before = await refused(gw, 'unauthenticated');
    const silent: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 40; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      s.on('close', () => closed++);
      silent.push(s);
    }
    await until(async () => (await refused(gw, 'unauthenticated')) - before >= 24, 10_000, 'the excess idle connections to be closed');
    const c = await connectWithToken(gw, 'streamable-http', token);
    const r = await c.client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.ok(Array.isArray(r.content));
    await c.client.close();
    for (const s of silent) s.destroy();
    await until(() => closed === 40, 10_000, 'the test sockets to close');
  });
});

describe('connection limits: the total cap and readiness', () => {
  let dir: string;
  let gw: RunningGateway;
  let port: number;
  let token: string;

  before(async () => {
    ({ dir, token, gw, port } = await startLimitedGateway({ maxConnections: 8, maxUnauthenticatedConnections: 4 }));
  });

  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connections beyond maxConnections are closed at once and counted; /readyz is 503 while near the cap', async () => {
    // Eight authenticated keep-alive connections (each made one authenticated request: 400, no session id).
    const held: Socket[] = [];
    for (let i = 0; i < 8; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
      await new Promise<void>((res) => {
        s.once('data', () => res());
        s.write(`${postHead(token, body.length)}${body}`);
      });
      held.push(s);
    }
    const before = await refused(gw, 'max_connections');
    const r = await exchange(port, postHead(token, 2) + '{}', { deadlineMs: 10_000 });
    assert.equal(r.data, '', 'closed without an answer');
    await until(async () => (await refused(gw, 'max_connections')) > before, 5_000, 'the refusal to be counted');
    for (const s of held.slice(0, 2)) s.destroy();
    // Still six of at most eight open: not ready (the probe itself is the seventh).
    // (A probe made before the server saw the two close is itself refused: retried.)
    const readyz = () => fetch(gw.url('/readyz')).then((r) => r.status, () => 0);
    await until(async () => (await readyz()) === 503, 5_000, '/readyz to answer 503');
    for (const s of held) s.destroy();
    await until(async () => (await readyz()) === 200, 10_000, '/readyz to answer 200 again');
  });
});

/** Rejects when `p` has not settled within `ms`: a hung step fails with its name instead of the file timing out. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (t = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)))]).finally(() => clearTimeout(t));
}

/**
 * A client slow to speak: connects, waits `delayMs` (its host busy, say), then writes `request`; resolves
 * with what the gateway sent, once it sent something or closed the connection.
 */
function speakLate(port: number, delayMs: number, request: string): Promise<{ data: string; socket: Socket }> {
  return new Promise((resolvePromise) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('connect', () => setTimeout(() => socket.writable && socket.write(request), delayMs));
    socket.on('data', (b: Buffer) => {
      data += b.toString();
      if (data.includes('\r\n\r\n')) resolvePromise({ data, socket });
    });
    socket.on('error', () => {});
    socket.on('close', () => resolvePromise({ data, socket }));
  });
}

describe('connection limits: a client slow to speak while unauthenticated connections press', () => {
  let dir: string;
  let token: string;
  let gw: RunningGateway;
  let port: number;

  before(async () => {
    // Over the cap, a connection may stay silent for a quarter of the headers timeout: 2 s here.
    ({ dir, token, gw, port } = await startLimitedGateway({ headersTimeoutMs: 8000, maxConnections: 64, maxUnauthenticatedConnections: 16 }));
  });

  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client whose request comes 800 ms after it connected is served; the cap still closes the excess', async () => {
    const before = await refused(gw, 'unauthenticated');
    // 24 connections over a cap of 16 (below the ceiling of 40), half silent, half holding request headers
    // they never finish; each reopened 20 ms after the gateway closes it.
    const unfinished = postHead(undefined, 100).slice(0, -2);
    const stop = { now: false, budget: 2_000 };
    const seen = { opened: 0, answered401: 0 };
    const attack = Array.from({ length: 24 }, (_, i) => attacker(port, i % 2 === 0 ? '' : unfinished, stop, seen, 20));
    try {
      await until(() => seen.opened >= 24, 5_000, 'the attack to open its connections');
      // The gateway saw the client connect at once and heard nothing for 800 ms: a connection it took for a
      // silent attacker after 250 ms, closing it with the request on its way.
      const body = JSON.stringify(initializeBody());
      const r = await within(speakLate(port, 800, `${postHead(token, Buffer.byteLength(body))}${body}`), 10_000, 'the slow client\'s answer');
      r.socket.destroy();
      assert.match(r.data, /^HTTP\/1\.1 200 /, `the gateway closed the slow client's connection before its request came; it sent: ${JSON.stringify(r.data.slice(0, 200))}`);
      // The silent and unfinished connections past their grace are still closed down to the cap.
      await until(async () => (await refused(gw, 'unauthenticated')) - before >= 8, 10_000, 'connections over the cap to be closed');
    } finally {
      stop.now = true;
      await Promise.all(attack);
    }
  });
});

describe('acceptance: 2,000 idle connections under ulimit -n 1024', { timeout: 170_000 }, () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let attackProcess: ChildProcess | undefined;
  const fdLimit = descriptorLimit() ?? 0;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'swb-fd-'));
  });

  after(() => {
    child?.kill('SIGKILL');
    attackProcess?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves an authenticated client served: 0 failures among 200 calls made during the attack', { skip: fdLimit < 2600 ? `the test process may open only ${fdLimit} descriptors` : false }, async () => {
    const key = await makeKey('k1');
    writeFileSync(join(dir, 'key.pem'), key.spki);
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `server: { host: 127.0.0.1, port: 0, publicUrl: ${PUBLIC_URL} }
metrics: { enabled: false }
auth: { mode: jwt, issuer: "${ISSUER}", audience: ["${PUBLIC_URL}"], keys: ["${join(dir, 'key.pem')}"] }
tenants: [{ name: acme, endpoints: ["/mcp"], limits: { requestsPerSecond: 1000, burst: 1000 } }]
upstreams:
  - { name: fixture, transport: stdio, sandbox: none, sharing: shared, command: ${process.execPath}, args: [${resolve(FIXTURE.args[0]!)}] }
endpoints: [{ path: /mcp, upstreams: [fixture] }]
`,
    );
    const cmd = `ulimit -n 1024 && exec "${process.execPath}" --import tsx src/main.ts serve --config "${file}"`;
    child = spawn('bash', ['-c', cmd], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.resume();
    const address = await listeningAddress(child, 60_000);
    const port = Number(new URL(address).port);
    const token = await signToken(key, { aud: PUBLIC_URL, kid: null });

    // 1,000 connections that send POST headers announcing a body and no token, and 1,000 that send
    // nothing; each reopened when the gateway closes it, until the calls are done (bounded in count), from
    // a process of its own (test/helpers/idle-attack.ts says why).
    const slots = [{ head: postHead(undefined, 100), count: 1000 }, { head: '', count: 1000 }];
    attackProcess = spawn(process.execPath, ['--import', 'tsx', resolve('test/helpers/idle-attack.ts'), String(port), JSON.stringify({ slots, budget: 30_000, pauseMs: 1000 })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const seen = { opened: 0, answered401: 0 };
    attackProcess.on('message', (m: typeof seen) => Object.assign(seen, m));
    const attackDone = new Promise<void>((done) => attackProcess!.once('exit', () => done()));
    const stopAttack = async (): Promise<void> => {
      if (attackProcess?.connected) attackProcess.send('stop');
      await within(attackDone, 30_000, 'the attack to stop');
    };
    await until(() => seen.opened >= 2000, 30_000, 'the attack to open 2,000 connections');

    const gw = { url: (p = '/mcp') => new URL(p, address) } as RunningGateway;
    let failures = 0;
    const errors: string[] = [];
    // Whatever fails, the attack stops (it would otherwise hold the test process until its budget runs out).
    try {
      const clients = await within(Promise.all(Array.from({ length: 4 }, () => connectWithToken(gw, 'streamable-http', token))), 60_000, 'initialize during the attack');
      await within(Promise.all(
        clients.map(async (c) => {
          for (let i = 0; i < 50; i++) {
            const started = Date.now();
            try {
              const r = await c.client.callTool({ name: 'test_simple_text', arguments: {} }, undefined, { timeout: 30_000 });
              if (!Array.isArray(r.content)) throw new Error(JSON.stringify(r));
            } catch (err) {
              failures++;
              // fetch's own message is 'fetch failed'; what failed is in its cause (a reset, a connect timeout…).
              const cause = (err as { cause?: { code?: string; message?: string } }).cause;
              errors.push(`${(err as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''} after ${Date.now() - started} ms`);
            }
          }
        }),
      ), 100_000, '200 calls during the attack');
      // An attacker counts its 401 when the gateway closes that connection; the calls can be done before
      // the first of those closes (seen once in a quick run), so the attack goes on until one is counted
      // (bounded: the assertion below still fails if none comes).
      await until(() => seen.answered401 > 0, 15_000, 'a header-only connection to be answered 401').catch(() => {});
      await stopAttack();
      await Promise.all(clients.map((c) => c.client.close()));
    } finally {
      await stopAttack().catch(() => attackProcess?.kill('SIGKILL'));
    }
    assert.equal(failures, 0, `failures: ${errors.slice(0, 5).join('; ')}`);
    assert.ok(seen.answered401 > 0, 'the header-only connections were answered 401');
    assert.equal(child.exitCode, null, 'the gateway is still running');
  });
});
