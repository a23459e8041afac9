import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig, parseConfig } from '../../../src/config/load.js';
import { messagesPathOf, ssePathOf, type StdioUpstreamConfig } from '../../../src/config/schema.js';

const up = (name: string, extra: Record<string, unknown> = {}) => ({ name, transport: 'stdio', command: 'node', ...extra });

function doc(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { upstreams: [up('a')], endpoints: [{ path: '/mcp', upstreams: ['a'] }], ...over };
}

/** parseConfig must throw a ConfigError; returns its problems. */
function problems(input: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(input, 'test.yaml', env, '/base');
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.match(err.message, /^invalid configuration in test\.yaml:\n {2}- /);
    return err.problems;
  }
  assert.fail('parseConfig accepted an invalid document');
}

function hasProblem(list: string[], path: string, fragment?: string): void {
  const hit = list.find((p) => p.startsWith(`${path}: `) && (fragment === undefined || p.includes(fragment)));
  assert.ok(hit, `no problem at ${path}${fragment ? ` mentioning ${fragment}` : ''} in ${JSON.stringify(list)}`);
}

describe('parseConfig: defaults', () => {
  it('fills every default', () => {
    const cfg = parseConfig(doc(), 'test', {}, '/base');
    assert.deepEqual(cfg.server, {
      host: '127.0.0.1',
      port: 8080,
      allowedOrigins: [],
      allowedHosts: [],
      maxBodyBytes: 4 * 1024 * 1024,
      responseMode: 'auto',
      responseHoldMs: 50,
      keepAliveMs: 15_000,
      maxStreamBufferBytes: 8 * 1024 * 1024,
      shutdownGraceMs: 25_000,
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      bodyIdleTimeoutMs: 5_000,
      maxJsonDepth: 64,
      maxBatchMessages: 100,
    });
    assert.deepEqual(cfg.session, { idleTimeoutMs: 30 * 60_000, maxSessions: 100_000, clientRequestTimeoutMs: 300_000, eventsPerStream: 1000, eventBytesPerSession: 8 * 1024 * 1024, answerGraceMs: 10_000 });
    assert.deepEqual(cfg.logging, { level: 'info' });
    assert.deepEqual(cfg.upstreams[0], {
      name: 'a',
      transport: 'stdio',
      command: 'node',
      args: [],
      env: {},
      sharing: 'shared',
      pool: { size: 1, warm: 0, max: 100, queue: 100, acquireTimeoutMs: 30_000, userIdleMs: 600_000 },
      requestTimeoutMs: 60_000,
      maxRequestTimeoutMs: 600_000,
      initTimeoutMs: 30_000,
      era: 'auto',
      eraProbeMs: 3000,
      maxLineBytes: 16 * 1024 * 1024,
      maxResultBytes: 8 * 1024 * 1024,
      // Strict by default: an unconfined server must be written out as `sandbox: none`.
      sandbox: {
        type: 'bubblewrap',
        readOnly: [],
        writable: [],
        tmpSizeMb: 64,
        limits: { addressSpaceMb: 4096, openFiles: 1024, processes: 256, fileSizeMb: 1024 },
      },
      restart: { initialDelayMs: 250, maxDelayMs: 30_000, resetAfterMs: 60_000 },
      concurrency: { max: 256, queue: 1024, queueTimeoutMs: 30_000, cancelledHoldMs: 5000 },
      healthCheck: { intervalMs: 30_000, timeoutMs: 5_000, failures: 3 },
      circuitBreaker: { failureThreshold: 5, resetTimeoutMs: 10_000 },
      relist: { intervalMs: 60_000, unknownToolMs: 5_000 },
    });
    assert.deepEqual(cfg.endpoints[0], { path: '/mcp', upstreams: ['a'], prefix: 'auto', scopes: [], failureMode: 'open', eras: ['legacy', 'modern'], cacheTtlMs: 0, tools: { exposure: 'all', maxToolNameLength: 64, maxSearchAnswerChars: 65_536, exclude: [], overrides: {}, tenants: {} }, guardrails: { hiddenText: { definitions: 'off', results: 'off', patterns: [], imageHosts: [] } } });
  });

  it('keeps given values over defaults', () => {
    const cfg = parseConfig(
      doc({ server: { port: 9000, responseMode: 'json' }, upstreams: [up('a', { sharing: 'per-session', pool: { warm: 2, max: 5 } })] }),
      'test',
      {},
    );
    assert.equal(cfg.server.port, 9000);
    assert.equal(cfg.server.host, '127.0.0.1');
    assert.equal(cfg.server.responseMode, 'json');
    assert.equal(cfg.upstreams[0]!.sharing, 'per-session');
    assert.deepEqual(cfg.upstreams[0]!.pool, { size: 1, warm: 2, max: 5, queue: 100, acquireTimeoutMs: 30_000, userIdleMs: 600_000 });
  });

  it('resolves a relative cwd against baseDir and keeps an absolute one', () => {
    const cfg = parseConfig(doc({ upstreams: [up('a', { cwd: 'servers/a' }), up('b', { cwd: '/abs/b' })] }), 'test', {}, '/base/dir');
    const cwd = (i: number) => (cfg.upstreams[i] as { cwd?: string }).cwd;
    assert.equal(cwd(0), resolve('/base/dir', 'servers/a'));
    assert.equal(cwd(1), '/abs/b');
  });

  it('paths relative to the config: cwd, a command with a slash, ./ and ../ arguments, sandbox paths; bare words untouched', () => {
    const cfg = parseConfig(
      doc({
        upstreams: [
          up('a', { command: './bin/server', args: ['./server.js', '../shared/lib', '.', '..', 'stdio', '--port', '3000', 'owner/repo', 'dist/index.js', '--file=./x', '/abs/y'] }),
          up('b', { command: 'node', cwd: 'servers/b', args: ['./index.js'], sandbox: { readOnly: ['.', 'node_modules'], writable: ['/var/data', './scratch'] } }),
          up('c', { command: 'bin/tool', cwd: '/opt/c' }),
        ],
        endpoints: [{ path: '/mcp', upstreams: ['a', 'b', 'c'] }],
        auth: { keys: ['keys/pub.pem', '/etc/k.pem'] },
        pinning: { file: 'pins.json' },
      }),
      'test',
      {},
      '/base/dir',
    );
    const [a, b, c] = cfg.upstreams as StdioUpstreamConfig[];
    assert.equal(a!.command, '/base/dir/bin/server');
    assert.deepEqual(a!.args, ['/base/dir/server.js', '/base/shared/lib', '/base/dir', '/base', 'stdio', '--port', '3000', 'owner/repo', 'dist/index.js', '--file=./x', '/abs/y']);
    // With a cwd, the upstream's paths are relative to it, as for a shell started there.
    assert.equal(b!.command, 'node');
    assert.equal(b!.cwd, '/base/dir/servers/b');
    assert.deepEqual(b!.args, ['/base/dir/servers/b/index.js']);
    assert.ok(b!.sandbox !== 'none');
    assert.deepEqual(b!.sandbox.readOnly, ['/base/dir/servers/b', '/base/dir/servers/b/node_modules']);
    assert.deepEqual(b!.sandbox.writable, ['/var/data', '/base/dir/servers/b/scratch']);
    assert.equal(c!.command, '/opt/c/bin/tool');
    assert.deepEqual(cfg.auth.keys, ['/base/dir/keys/pub.pem', '/etc/k.pem']);
    assert.equal(cfg.pinning.file, '/base/dir/pins.json');
  });

  it('returns a deeply frozen config', () => {
    const cfg = parseConfig(doc(), 'test', {});
    assert.ok(Object.isFrozen(cfg));
    assert.ok(Object.isFrozen(cfg.server));
    assert.ok(Object.isFrozen(cfg.server.allowedOrigins));
    assert.ok(Object.isFrozen(cfg.upstreams));
    assert.ok(Object.isFrozen(cfg.upstreams[0]));
    assert.ok(Object.isFrozen(cfg.upstreams[0]!.pool));
    assert.ok(Object.isFrozen((cfg.upstreams[0] as StdioUpstreamConfig).args));
    assert.ok(Object.isFrozen(cfg.endpoints[0]!.upstreams));
    assert.throws(() => {
      (cfg.server as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (cfg.upstreams as unknown[]).push({});
    }, TypeError);
    assert.equal(cfg.server.port, 8080);
  });
});

describe('parseConfig: errors name their path', () => {
  it('an empty document names the missing top-level lists', () => {
    const p = problems(null);
    hasProblem(p, 'upstreams');
    hasProblem(p, 'endpoints');
  });

  it("a replica's heartbeat that lapses before (or about when) the next beat comes is refused: its replica would look dead at every beat", () => {
    const redis = (r: Record<string, unknown>) => doc({ store: { redis: { url: 'redis://127.0.0.1:6379', ...r } } });
    // heartbeatMs raised to spare Redis, replicaTtlMs left at its default (5000): the key expires before the next beat.
    hasProblem(problems(redis({ heartbeatMs: 10_000 })), 'store.redis.replicaTtlMs', 'heartbeatMs');
    hasProblem(problems(redis({ heartbeatMs: 5_000 })), 'store.redis.replicaTtlMs', 'heartbeatMs');
    hasProblem(problems(redis({ heartbeatMs: 4_500, replicaTtlMs: 5_000 })), 'store.redis.replicaTtlMs', 'heartbeatMs');
    assert.equal(parseConfig(redis({ heartbeatMs: 3_000 }), 'test.yaml', {}, '/base').store.redis?.replicaTtlMs, 5_000);
    assert.equal(parseConfig(redis({ heartbeatMs: 200, replicaTtlMs: 1_000 }), 'test.yaml', {}, '/base').store.redis?.heartbeatMs, 200);
  });

  it("an endpoint's scope that a WWW-Authenticate challenge could not carry as it is (a space, a quote, a backslash)", () => {
    for (const bad of ['a b', 'say"hi"', 'back\\slash', '']) hasProblem(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'], scopes: [bad] }] })), 'endpoints[0].scopes[0]');
    assert.deepEqual(parseConfig(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'], scopes: ['mcp:use', 'https://api.example/read'] }] }), 'test.yaml', {}, '/base').endpoints[0]!.scopes, ['mcp:use', 'https://api.example/read']);
  });

  it('a bad upstream name', () => {
    hasProblem(problems(doc({ upstreams: [up('Bad_Name')], endpoints: [{ path: '/mcp', upstreams: ['a'] }] })), 'upstreams[0].name', 'lowercase letters');
  });

  it('"--" in an upstream name', () => {
    const p = problems(doc({ upstreams: [up('a--b')], endpoints: [{ path: '/mcp', upstreams: ['a--b'] }] }));
    hasProblem(p, 'upstreams[0].name', '"--"');
  });

  it('a name longer than 40 characters', () => {
    const long = 'a'.repeat(41);
    hasProblem(problems(doc({ upstreams: [up(long)], endpoints: [{ path: '/mcp', upstreams: [long] }] })), 'upstreams[0].name');
  });

  it('a missing command and a wrong transport', () => {
    hasProblem(problems(doc({ upstreams: [{ name: 'a', transport: 'stdio' }] })), 'upstreams[0].command');
    hasProblem(problems(doc({ upstreams: [{ name: 'a', transport: 'carrier-pigeon', command: 'x' }] })), 'upstreams[0].transport');
  });

  it('an unknown key is named at its own path with the key it probably meant, at any depth', () => {
    assert.deepEqual(problems(doc({ server: { prot: 1 } })), ['server.prot: unknown key; did you mean "port"?']);
    assert.deepEqual(problems(doc({ sever: {} })), ['sever: unknown key; did you mean "server"?']);
    assert.deepEqual(problems(doc({ upstreams: [up('a', { pool: { sise: 2 } })] })), ['upstreams[0].pool.sise: unknown key; did you mean "size"?']);
    assert.deepEqual(problems(doc({ upstreams: [up('a', { sandbox: { type: 'limits', limits: { openfiles: 9 } } })] })), ['upstreams[0].sandbox.limits.openfiles: unknown key; did you mean "openFiles"?']);
    // The keys of the transport written: a remote upstream is offered "headers", a stdio one is not.
    const remote = { name: 'r', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', header: {} };
    assert.deepEqual(problems(doc({ upstreams: [remote], endpoints: [{ path: '/mcp', upstreams: ['r'] }] })), ['upstreams[0].header: unknown key; did you mean "headers"?']);
    assert.deepEqual(problems(doc({ tenants: [{ name: 't', endpoints: ['*'], tool: {} }] })), ['tenants[0].tool: unknown key; did you mean "tools"?']);
    assert.deepEqual(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'], prefx: 'auto' }] })), ['endpoints[0].prefx: unknown key; did you mean "prefix"?']);
  });

  it('a misspelt required key is one problem, not "unknown key" plus "missing"', () => {
    assert.deepEqual(problems(doc({ upstreams: [{ name: 'a', transport: 'stdio', comand: 'node' }] })), ['upstreams[0].comand: unknown key; did you mean "command"?']);
  });

  it('unknown keys with no likely meaning are listed once per mapping, with what is allowed there', () => {
    const p = problems(doc({ logging: { colour: true, format: 'pretty' } }));
    assert.deepEqual(p, ['logging: unknown keys "colour", "format" (allowed here: level)']);
  });

  it('a wrong choice among fixed values says which was probably meant', () => {
    assert.deepEqual(problems(doc({ upstreams: [up('a', { transport: 'stdoi' })] })), ['upstreams[0].transport: "stdoi" is not one of "stdio", "streamable-http", "sse"; did you mean "stdio"?']);
    hasProblem(problems(doc({ upstreams: [up('a', { sharing: 'per-sesion' })] })), 'upstreams[0].sharing', 'did you mean "per-session"?');
    assert.deepEqual(problems(doc({ upstreams: [up('a', { sandbox: 'nothing' })] })), ['upstreams[0].sandbox: expected "none" or an object, got "nothing"']);
  });

  it('a URL scheme the transport cannot use', () => {
    const remote = (transport: string, url: string) => ({ name: 'r', transport, url });
    const at = (u: object) => problems(doc({ upstreams: [u], endpoints: [{ path: '/mcp', upstreams: ['r'] }] }));
    assert.deepEqual(at(remote('streamable-http', 'ftp://files.example/mcp')), ['upstreams[0].url: the streamable-http transport cannot use ftp:// URLs; it needs http:// or https://']);
    assert.deepEqual(at(remote('sse', 'file:///etc/passwd')), ['upstreams[0].url: the sse transport cannot use file:// URLs; it needs http:// or https://']);
    assert.deepEqual(at(remote('sse', 'mcp.example.com/sse')), ['upstreams[0].url: "mcp.example.com/sse" is not a URL; the sse transport needs an http:// or https:// URL']);
    hasProblem(problems(doc({ auth: { mode: 'jwt', issuer: 'https://i.example', jwksUrl: 'ftp://i.example/jwks' } })), 'auth.jwksUrl', 'cannot use ftp:// URLs');
    hasProblem(problems(doc({ server: { publicUrl: 'ws://127.0.0.1:8080' } })), 'server.publicUrl', 'cannot use ws:// URLs');
    const creds = { type: 'client-credentials', tokenUrl: 'gopher://idp.example/token', clientId: 'c', clientSecret: 's' };
    hasProblem(at({ ...remote('sse', 'https://mcp.example/sse'), auth: creds }), 'upstreams[0].auth.tokenUrl', 'cannot use gopher:// URLs');
  });

  it('a per-user credential on an upstream that is not per-user, or without exactly one secret', () => {
    const exchange = { type: 'token-exchange', tokenEndpoint: 'https://idp.example/token', clientId: 'c', clientSecret: 's', audience: 'https://tickets.example' };
    const input = (u: object) => doc({ upstreams: [{ name: 'r', transport: 'streamable-http', url: 'https://mcp.example/mcp', ...u }], endpoints: [{ path: '/mcp', upstreams: ['r'] }] });
    const at = (u: object) => problems(input(u));
    hasProblem(at({ auth: exchange }), 'upstreams[0].sharing', 'token-exchange needs sharing: per-user');
    hasProblem(at({ sharing: 'per-tenant', auth: exchange }), 'upstreams[0].sharing', '"per-tenant" would share it');
    const ok = parseConfig(input({ sharing: 'per-user', auth: { ...exchange, clientSecret: undefined, clientSecretFile: 'secret.txt' } }), 'test.yaml', {}, '/base');
    const auth = ok.upstreams[0]!.transport === 'stdio' ? undefined : ok.upstreams[0]!.auth;
    assert.equal(auth?.type === 'token-exchange' ? auth.clientSecretFile : undefined, '/base/secret.txt', 'a secret file relative to the config file');
    hasProblem(at({ sharing: 'per-user', auth: { ...exchange, clientSecretFile: 'secret.txt' } }), 'upstreams[0].auth.clientSecret', 'set clientSecret or clientSecretFile');
    hasProblem(at({ sharing: 'per-user', auth: { ...exchange, tokenEndpoint: 'ftp://idp.example/token' } }), 'upstreams[0].auth.tokenEndpoint', 'cannot use ftp:// URLs');
  });

  it("a stdio upstream given its user's token: only per-session, no spares, a variable named, an authorization server named", () => {
    const exchange = { type: 'token-exchange', tokenEndpoint: 'https://idp.example/token', clientId: 'c', clientSecret: 's', audience: 'https://tickets.example' };
    const consent = { type: 'user-oauth', clientId: 'c' };
    const vault = { server: { publicUrl: 'https://gw.example' }, auth: { mode: 'jwt', issuer: 'https://i.example', jwksUrl: 'https://i.example/jwks' }, tenants: [{ name: 't', endpoints: ['*'] }], vault: { key: Buffer.alloc(32, 1).toString('base64') } };
    const at = (u: Record<string, unknown>, over: Record<string, unknown> = {}) => problems(doc({ upstreams: [up('s', u)], endpoints: [{ path: '/mcp', upstreams: ['s'] }], ...over }));
    const good = { sharing: 'per-session', tokenEnv: 'GITHUB_TOKEN', auth: exchange };
    const ok = parseConfig(doc({ upstreams: [up('s', { ...good, auth: { ...exchange, clientSecret: undefined, clientSecretFile: 'secret.txt' } })], endpoints: [{ path: '/mcp', upstreams: ['s'] }] }), 'test.yaml', {}, '/base');
    const u = ok.upstreams[0]!;
    assert.equal(u.transport === 'stdio' && u.tokenEnv, 'GITHUB_TOKEN');
    assert.equal(u.auth?.type === 'token-exchange' ? u.auth.clientSecretFile : undefined, '/base/secret.txt', 'a secret file relative to the config file');
    hasProblem(at({ ...good, sharing: 'shared' }), 'upstreams[0].sharing', 'needs sharing: per-session');
    hasProblem(at({ ...good, sharing: 'per-user' }), 'upstreams[0].sharing', '"per-user" would share it');
    hasProblem(at({ ...good, tokenEnv: undefined }), 'upstreams[0].tokenEnv', 'name it');
    hasProblem(at({ ...good, tokenEnv: 'GITHUB-TOKEN' }), 'upstreams[0].tokenEnv', 'an environment variable name');
    hasProblem(at({ sharing: 'per-session', tokenEnv: 'X' }), 'upstreams[0].tokenEnv', 'set auth');
    hasProblem(at({ ...good, env: { GITHUB_TOKEN: 'static' } }), 'upstreams[0].env.GITHUB_TOKEN', 'cannot be set here too');
    // Refused by every spawn (Node: NUL; the kernel reads "A=B" as A): said at load, not as a start failing for ever (found by a review).
    hasProblem(at({ env: { 'A=B': 'x' } }), 'upstreams[0].env.A=B', 'no "=" or NUL');
    hasProblem(at({ env: { A: 'x\u0000y' } }), 'upstreams[0].env.A', 'NUL');
    hasProblem(at({ ...good, pool: { warm: 1 } }), 'upstreams[0].pool.warm', 'set warm to 0');
    hasProblem(at({ ...good, auth: { type: 'client-credentials', tokenUrl: 'https://idp.example/t', clientId: 'c', clientSecret: 's' } }), 'upstreams[0].auth');
    hasProblem(at({ ...good, auth: consent }, vault), 'upstreams[0].auth.authorizationServer', 'no URL to discover');
    hasProblem(at({ ...good, auth: { ...consent, authorizationServer: 'https://idp.example' } }), 'upstreams[0].auth', 'set vault.key');
    parseConfig(doc({ ...vault, upstreams: [up('s', { ...good, auth: { ...consent, authorizationServer: 'https://idp.example' } })], endpoints: [{ path: '/mcp', upstreams: ['s'] }] }), 'test.yaml', {}, '/base');
  });

  it('a union no branch takes names a mapping, and shows ${VAR} and not the secret it stands for', () => {
    const bad = (auth: Record<string, unknown>) =>
      problems(doc({ upstreams: [{ name: 'r', transport: 'streamable-http', url: 'https://u.example/mcp', sharing: 'per-user', auth }], endpoints: [{ path: '/mcp', upstreams: ['r'] }] }), { S: 'TOPSECRET-123' });
    // token_exchange, not token-exchange: every branch refuses it.
    const list = bad({ type: 'token_exchange', tokenEndpoint: 'https://idp.example/t', clientId: 'c', clientSecret: '${S}' });
    assert.ok(list.length > 0);
    for (const line of list) assert.doesNotMatch(line, /TOPSECRET/, line);
    assert.ok(list.some((l) => l.startsWith('upstreams[0].auth')), JSON.stringify(list));
  });

  it('a URL from ${VAR} that does not parse is quoted as written, never with the credential it carries', () => {
    const input = doc({ upstreams: [{ name: 'r', transport: 'streamable-http', url: '${MCP_URL}' }], endpoints: [{ path: '/mcp', upstreams: ['r'] }] });
    // A typo in the port: the whole URL, password included, used to be quoted in the problem.
    const list = problems(input, { MCP_URL: 'https://bot:TOPSECRET-123@mcp.example.com:44x3/mcp' });
    assert.deepEqual(list, ['upstreams[0].url: "${MCP_URL}" is not a URL; the streamable-http transport needs an http:// or https:// URL']);
  });

  it('a nested bad value', () => {
    hasProblem(problems(doc({ upstreams: [up('a', { pool: { size: 0 } })] })), 'upstreams[0].pool.size');
    hasProblem(problems(doc({ upstreams: [up('a', { restart: { initialDelayMs: 1.5 } })] })), 'upstreams[0].restart.initialDelayMs');
    hasProblem(problems(doc({ server: { port: 70000 } })), 'server.port');
    hasProblem(problems(doc({ logging: { level: 'loud' } })), 'logging.level');
  });

  it("an endpoint on one of the gateway's own paths (probes, OAuth metadata, consent) is refused", () => {
    const at = (e: Record<string, unknown>) => problems(doc({ endpoints: [{ upstreams: ['a'], ...e }] }));
    hasProblem(at({ path: '/healthz' }), 'endpoints[0].path', 'a health probe');
    hasProblem(at({ path: '/.well-known/mcp' }), 'endpoints[0].path', 'OAuth metadata');
    hasProblem(at({ path: '/oauth' }), 'endpoints[0].path', 'user consent');
    hasProblem(at({ path: '/x', ssePath: '/readyz' }), 'endpoints[0].ssePath', 'a health probe');
    hasProblem(at({ path: '/x', ssePath: '/oauth/sse' }), 'endpoints[0].ssePath', 'user consent');
    parseConfig(doc({ endpoints: [{ path: '/healthz-mcp', upstreams: ['a'] }] }), 'test.yaml', {}, '/base');
  });

  it('metrics.path /healthz is refused: the metrics listener answers the liveness probe there', () => {
    hasProblem(problems(doc({ metrics: { path: '/healthz' } })), 'metrics.path', 'liveness probe');
    parseConfig(doc({ metrics: { path: '/healthz-metrics' } }), 'test.yaml', {}, '/base');
  });

  it('an endpoint naming an unknown upstream', () => {
    const p = problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a', 'ghost'] }] }));
    hasProblem(p, 'endpoints[0].upstreams[1]', 'unknown upstream "ghost"');
    const q = problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['ghost'] }] }));
    hasProblem(q, 'endpoints[0].upstreams[0]', 'unknown upstream "ghost"');
  });

  it('duplicate upstream names', () => {
    hasProblem(problems(doc({ upstreams: [up('a'), up('a')] })), 'upstreams[1].name', 'duplicate upstream name "a"');
  });

  it('an endpoint listing an upstream twice', () => {
    hasProblem(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a', 'a'] }] })), 'endpoints[0].upstreams', 'twice');
  });

  it('prefix: never with two upstreams', () => {
    const p = problems(doc({ upstreams: [up('a'), up('b')], endpoints: [{ path: '/mcp', upstreams: ['a', 'b'], prefix: 'never' }] }));
    hasProblem(p, 'endpoints[0].prefix', '"never" needs exactly one upstream');
  });

  it('accepts prefix: never with one upstream', () => {
    const cfg = parseConfig(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'], prefix: 'never' }] }), 'test', {});
    assert.equal(cfg.endpoints[0]!.prefix, 'never');
  });

  it('bad endpoint paths', () => {
    hasProblem(problems(doc({ endpoints: [{ path: 'mcp', upstreams: ['a'] }] })), 'endpoints[0].path', 'an absolute URL path');
    hasProblem(problems(doc({ endpoints: [{ path: '/m cp', upstreams: ['a'] }] })), 'endpoints[0].path');
    hasProblem(problems(doc({ endpoints: [{ path: '/mcp/', upstreams: ['a'] }] })), 'endpoints[0].path', 'no trailing slash');
  });

  // A URL parser resolves "." and ".." away (the SDK's client asks for /mcp when told /team/../mcp) and
  // reads "//x" as a host: such an endpoint was accepted and no client could reach it.
  it('refuses "." and ".." segments and an empty one, in path and ssePath', () => {
    assert.equal(new URL('http://127.0.0.1/team/../mcp').pathname, '/mcp');
    for (const path of ['/team/../mcp', '/./mcp', '/mcp/.', '//mcp', '/a//mcp']) hasProblem(problems(doc({ endpoints: [{ path, upstreams: ['a'] }] })), 'endpoints[0].path', '".."');
    hasProblem(problems(doc({ endpoints: [{ path: '/mcp', ssePath: '/x/../sse', upstreams: ['a'] }] })), 'endpoints[0].ssePath', '".."');
    hasProblem(problems(doc({ endpoints: [{ path: '/mcp', ssePath: '//sse', upstreams: ['a'] }] })), 'endpoints[0].ssePath', '".."');
    assert.equal(parseConfig(doc({ endpoints: [{ path: '/', upstreams: ['a'] }, { path: '/a.b/..c/mcp', upstreams: ['a'] }] }), 'test', {}).endpoints[1]!.path, '/a.b/..c/mcp');
  });

  it('two endpoints on the same path, and an endpoint on another one\'s SSE path: one problem each', () => {
    // The same path clashes on all three derived paths (/mcp, /sse, /messages): still one problem.
    assert.deepEqual(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'] }, { path: '/mcp', upstreams: ['a'] }] })), ['endpoints[1].path: "/mcp" is already the path of endpoints[0]']);
    assert.deepEqual(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'] }, { path: '/sse', upstreams: ['a'] }] })), ['endpoints[1].path: "/sse" is already endpoints[0]\'s legacy SSE stream path']);
    assert.deepEqual(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'] }, { path: '/x', ssePath: '/sse', upstreams: ['a'] }] })), [
      'endpoints[1].ssePath: its legacy SSE stream path "/sse" is already endpoints[0]\'s legacy SSE stream path',
    ]);
  });

  it('per-session warm greater than max', () => {
    hasProblem(problems(doc({ upstreams: [up('a', { sharing: 'per-session', pool: { warm: 5, max: 2 } })] })), 'upstreams[0].pool.warm', 'must not exceed pool.max');
  });

  it('reports several problems at once', () => {
    const p = problems(doc({ upstreams: [up('a'), up('a')], endpoints: [{ path: '/mcp', upstreams: ['zz'] }] }));
    hasProblem(p, 'upstreams[1].name');
    hasProblem(p, 'endpoints[0].upstreams[0]');
  });
});

describe('parseConfig: ${VAR} interpolation', () => {
  it('replaces ${VAR} in nested strings', () => {
    const cfg = parseConfig(
      doc({ upstreams: [up('a', { command: '${BIN}/server', args: ['--token', '${TOKEN}'], env: { KEY: 'k-${TOKEN}-k' } })] }),
      'test',
      { BIN: '/opt/bin', TOKEN: 's3cret' },
    );
    assert.equal((cfg.upstreams[0] as StdioUpstreamConfig).command, '/opt/bin/server');
    assert.deepEqual((cfg.upstreams[0] as StdioUpstreamConfig).args, ['--token', 's3cret']);
    assert.deepEqual((cfg.upstreams[0] as StdioUpstreamConfig).env, { KEY: 'k-s3cret-k' });
  });

  it('uses the default of ${VAR:-default} when unset, the value when set', () => {
    const d = doc({ server: { host: '${HOST:-127.0.0.2}' } });
    assert.equal(parseConfig(d, 'test', {}).server.host, '127.0.0.2');
    assert.equal(parseConfig(d, 'test', { HOST: '127.0.0.3' }).server.host, '127.0.0.3');
  });

  it('an empty default is allowed', () => {
    const cfg = parseConfig(doc({ upstreams: [up('a', { env: { X: '${X:-}' } })] }), 'test', {});
    assert.deepEqual((cfg.upstreams[0] as StdioUpstreamConfig).env, { X: '' });
  });

  it(
    '${VAR:-default} uses the default when VAR is set but empty (shell and compose semantics of ":-")',
    () => {
      const cfg = parseConfig(doc({ server: { host: '${HOST:-127.0.0.2}' } }), 'test', { HOST: '' });
      assert.equal(cfg.server.host, '127.0.0.2');
    },
  );

  it('an unset variable without default is an error naming its path and the variable', () => {
    const p = problems(doc({ upstreams: [up('a', { env: { TOKEN: '${GITHUB_TOKEN}' }, args: ['x', '${OTHER}'] })] }), {});
    assert.deepEqual([...p].sort(), [
      'upstreams[0].args[1]: environment variable OTHER is not set',
      'upstreams[0].env.TOKEN: environment variable GITHUB_TOKEN is not set',
    ]);
  });

  it('leaves text that is not a ${NAME} reference alone', () => {
    const cfg = parseConfig(doc({ upstreams: [up('a', { args: ['$HOME', '${1BAD}', 'cost: $5'] })] }), 'test', {});
    assert.deepEqual((cfg.upstreams[0] as StdioUpstreamConfig).args, ['$HOME', '${1BAD}', 'cost: $5']);
  });

  // Kept as written, "${TOKEN:?must be set}" (docker compose's way to require a variable) went out as the token itself.
  it('a shell form it does not read (${VAR:?msg}, ${VAR-x}, ${VAR:+x}, ${VAR:=x}) is a problem naming the form, never what follows', () => {
    const headers = { a: 'Bearer ${TOKEN:?written-secret}', b: '${TOKEN-fallback}', c: '${TOKEN:+x}', d: '${TOKEN:=x}', e: '${TOKEN:-unclosed' };
    const list = problems(doc({ upstreams: [{ name: 'a', transport: 'streamable-http', url: 'https://x.example/mcp', headers }] }), { TOKEN: 'env-secret' });
    hasProblem(list, 'upstreams[0].headers.a', '"${TOKEN:?" is a shell form');
    hasProblem(list, 'upstreams[0].headers.b', '"${TOKEN-"');
    hasProblem(list, 'upstreams[0].headers.c', '"${TOKEN:+"');
    hasProblem(list, 'upstreams[0].headers.d', '"${TOKEN:="');
    hasProblem(list, 'upstreams[0].headers.e', '"${TOKEN:-"');
    assert.ok(!/written-secret|env-secret/.test(list.join('\n')), JSON.stringify(list));
    // Escaped, it is text like any other.
    const cfg = parseConfig(doc({ upstreams: [up('a', { args: ['$${TOKEN:?x}'] })] }), 'test', {});
    assert.deepEqual((cfg.upstreams[0] as StdioUpstreamConfig).args, ['${TOKEN:?x}']);
  });

  it('a value that is exactly one ${VAR} fills a number or a boolean: port: ${PORT} (found by a review)', () => {
    const env = { PORT: '9090', METRICS: 'false', HOLD: '75', ARG: '42' };
    const cfg = parseConfig(
      doc({
        server: { port: '${PORT}', responseHoldMs: '${HOLD:-50}', maxJsonDepth: '${DEPTH:-32}' },
        metrics: { enabled: '${METRICS}' },
        upstreams: [up('a', { args: ['${ARG}'], env: { N: '${ARG}' } })],
      }),
      'test',
      env,
    );
    assert.equal(cfg.server.port, 9090);
    assert.equal(cfg.server.responseHoldMs, 75);
    assert.equal(cfg.server.maxJsonDepth, 32);
    assert.equal(cfg.metrics.enabled, false);
    // Where the schema wants a string, the value stays one.
    const a = cfg.upstreams[0] as StdioUpstreamConfig;
    assert.deepEqual(a.args, ['42']);
    assert.equal(a.env.N, '42');
  });

  it('a ${VAR} whose value does not read as the number or boolean wanted is one problem, quoting the value as written', () => {
    const list = problems(doc({ server: { port: '${PORT}' }, metrics: { enabled: '${METRICS}' } }), { PORT: '80a-secret', METRICS: 'yes-secret' });
    assert.deepEqual(list, [
      'server.port: "${PORT}" is not a number: the variable\'s value must be one (digits, optionally with a sign and a decimal point)',
      'metrics.enabled: "${METRICS}" is not a boolean: the variable\'s value must be true or false',
    ]);
    // A value mixing text and a reference is no number either: the schema says so, as for any string.
    hasProblem(problems(doc({ server: { port: '80${PORT}' } }), { PORT: '80' }), 'server.port');
  });

  it('$${NAME} is a literal ${NAME}, whether NAME is set or not (as docker compose writes it)', () => {
    const args = ['$${NAME}', 'x-$${UNSET:-d}-$${NAME}', '$${NAME}/${NAME}', 'cost: $$5'];
    const cfg = parseConfig(doc({ upstreams: [up('a', { args, env: { TEMPLATE: 'Bearer $${TOKEN}' } })] }), 'test', { NAME: 'value' });
    const a = cfg.upstreams[0] as StdioUpstreamConfig;
    assert.deepEqual(a.args, ['${NAME}', 'x-${UNSET:-d}-${NAME}', '${NAME}/value', 'cost: $$5']);
    assert.equal(a.env.TEMPLATE, 'Bearer ${TOKEN}');
  });
});

describe('loadConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swb-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loads a YAML file, resolving relative cwd against the file', () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, ['upstreams:', '  - name: a', '    transport: stdio', '    command: node', '    cwd: sub', 'endpoints:', '  - path: /mcp', '    upstreams: [a]', ''].join('\n'));
    const cfg = loadConfig(file, {});
    assert.equal((cfg.upstreams[0] as StdioUpstreamConfig).cwd, join(dir, 'sub'));
    assert.equal(cfg.server.port, 8080);
  });

  it('applies SWITCHBOARD_HOST, SWITCHBOARD_PORT and LOG_LEVEL overrides', () => {
    const file = join(dir, 'env.yaml');
    writeFileSync(file, 'server:\n  port: 1234\nupstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [a]}\n');
    const cfg = loadConfig(file, { SWITCHBOARD_HOST: '127.0.0.2', SWITCHBOARD_PORT: '9999', LOG_LEVEL: 'debug' });
    assert.equal(cfg.server.host, '127.0.0.2');
    assert.equal(cfg.server.port, 9999);
    assert.equal(cfg.logging.level, 'debug');
  });

  it('LOG_LEVEL in capitals (LOG_LEVEL=DEBUG, as many images and platforms set it) is the same level', () => {
    const file = join(dir, 'env-level.yaml');
    writeFileSync(file, 'upstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [a]}\n');
    assert.equal(loadConfig(file, { LOG_LEVEL: 'DEBUG' }).logging.level, 'debug');
    assert.equal(loadConfig(file, { LOG_LEVEL: 'Warn' }).logging.level, 'warn');
  });

  it('a bad value from an environment override is reported naming the variable, never quoting it', () => {
    const file = join(dir, 'env-bad.yaml');
    writeFileSync(file, 'server:\n  port: 1234\nupstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [a]}\n');
    const env = { SWITCHBOARD_PORT: '80a', SWITCHBOARD_VAULT_KEY: 'not-a-vault-key-secret', SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS: 'short-secret', SWITCHBOARD_REQUEST_STATE_KEY: 'k'.repeat(32) };
    let list: string[] = [];
    assert.throws(() => loadConfig(file, env), (err: unknown) => err instanceof ConfigError && (list = err.problems).length > 0);
    // The file says port: 1234 and has no vault at all: a problem that does not name the variable sends the operator to the wrong place.
    hasProblem(list, 'server.port', 'SWITCHBOARD_PORT');
    hasProblem(list, 'vault.key', 'SWITCHBOARD_VAULT_KEY');
    hasProblem(list, 'modern.requestStatePreviousKeys[0]', 'SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS');
    assert.ok(!list.some((p) => p.includes('NaN') || p.includes('secret') || p.includes('80a')), JSON.stringify(list));
  });

  it(
    'a scalar "server" with an environment override still gives a ConfigError naming "server"',
    () => {
      const file = join(dir, 'scalar-server.yaml');
      writeFileSync(file, 'server: localhost\nupstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [a]}\n');
      // Without overrides it is reported properly...
      assert.throws(() => loadConfig(file, {}), (err: unknown) => err instanceof ConfigError && err.problems.some((p) => p.startsWith('server: ')));
      // ...with one, it must be too.
      assert.throws(() => loadConfig(file, { SWITCHBOARD_PORT: '9000' }), (err: unknown) => err instanceof ConfigError && err.problems.some((p) => p.startsWith('server: ')));
    },
  );

  it('port: ${PORT} written unquoted in YAML reads as the number', () => {
    const file = join(dir, 'port-ref.yaml');
    writeFileSync(file, 'server:\n  port: ${PORT}\nupstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [a]}\n');
    assert.equal(loadConfig(file, { PORT: '8181' }).server.port, 8181);
  });

  it('bad YAML gives a ConfigError naming the file', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'upstreams: [\n  - name: a\n  bad: : :\n');
    assert.throws(
      () => loadConfig(file, {}),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 1 && err.problems[0]!.startsWith('not valid YAML: ') && err.message.includes(file),
    );
  });

  it('bad YAML is described by line and column, never by the text of the line: a secret written there stays out of the log and the reload answer', () => {
    const file = join(dir, 'bad-secret.yaml');
    writeFileSync(file, 'admin:\n  token: s3cr3t-admin-token-0123456789abcdef\n   enabled: true\nupstreams:\n  - name: a\n    env:\n      TOKEN: s3cr3t-env-value: oops\n');
    for (const [text, line] of [
      [readFileSync(file, 'utf8'), 2],
      ['upstreams:\n  - name: a\n    transport: stdio\n    env:\n      TOKEN: s3cr3t-env-value: oops\n', 5],
    ] as const) {
      writeFileSync(file, text);
      assert.throws(
        () => loadConfig(file, {}),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.equal(err.problems.length, 1);
          assert.match(err.problems[0]!, new RegExp(`^not valid YAML: .+ at line ${line}, column \\d+$`));
          assert.doesNotMatch(err.message, /s3cr3t/);
          return true;
        },
      );
    }
  });

  it('a YAML merge key (<<: *anchor, as compose files and Kubernetes manifests use it) shares settings between upstreams', () => {
    const file = join(dir, 'merge.yaml');
    writeFileSync(file, 'upstreams:\n  - &stdio { name: a, transport: stdio, command: node, sandbox: none }\n  - <<: *stdio\n    name: b\nendpoints: [{ path: /mcp, upstreams: [a, b] }]\n');
    const cfg = loadConfig(file, {});
    const b = cfg.upstreams[1] as StdioUpstreamConfig;
    assert.equal(b.name, 'b');
    assert.equal(b.transport, 'stdio');
    assert.equal(b.command, 'node');
    assert.equal(b.sandbox, 'none');
  });

  it('aliases that expand past the parser\'s bound (a "billion laughs" file) are a problem of the file, not a crash', () => {
    const file = join(dir, 'aliases.yaml');
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (const [prev, name] of [['a', 'b'], ['b', 'c'], ['c', 'd'], ['d', 'e']]) levels.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(',')}]`);
    writeFileSync(file, `${levels.join('\n')}\nupstreams: *e\n`);
    assert.throws(
      () => loadConfig(file, {}),
      (err: unknown) => err instanceof ConfigError && err.problems.length === 1 && /^not valid YAML: .*alias/i.test(err.problems[0]!),
    );
  });

  it('a missing file gives a ConfigError', () => {
    const file = join(dir, 'absent.yaml');
    assert.throws(
      () => loadConfig(file, {}),
      (err: unknown) => err instanceof ConfigError && err.problems[0]!.startsWith('cannot read the file: '),
    );
  });

  it('schema problems in a file name the file and the path', () => {
    const file = join(dir, 'schema.yaml');
    writeFileSync(file, 'upstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [b]}\n');
    assert.throws(
      () => loadConfig(file, {}),
      (err: unknown) =>
        err instanceof ConfigError && err.message.startsWith(`invalid configuration in ${file}:`) && err.problems.some((p) => p.startsWith('endpoints[0].upstreams[0]: unknown upstream "b"')),
    );
  });
});

describe('ssePathOf / messagesPathOf', () => {
  it('derives the legacy SSE and messages paths', () => {
    assert.equal(ssePathOf({ path: '/mcp' }), '/sse');
    assert.equal(messagesPathOf({ path: '/mcp' }), '/messages');
    assert.equal(ssePathOf({ path: '/mcp/github' }), '/mcp/github/sse');
    assert.equal(messagesPathOf({ path: '/mcp/github' }), '/mcp/github/messages');
    assert.equal(ssePathOf({ path: '/' }), '/sse');
    assert.equal(messagesPathOf({ path: '/' }), '/messages');
    assert.equal(ssePathOf({ path: '/x' }), '/x/sse');
    assert.equal(messagesPathOf({ path: '/x' }), '/x/messages');
  });

  it('honours an explicit ssePath', () => {
    assert.equal(ssePathOf({ path: '/mcp', ssePath: '/legacy/events' }), '/legacy/events');
    assert.equal(messagesPathOf({ path: '/mcp', ssePath: '/legacy/events' }), '/legacy/messages');
    assert.equal(ssePathOf({ path: '/mcp', ssePath: undefined }), '/sse');
  });
});

describe('parseConfig: auth', () => {
  const base = { upstreams: [{ name: 'a', transport: 'stdio', command: 'x' }], endpoints: [{ path: '/mcp', upstreams: ['a'] }] };
  it('refuses auth none on a non-loopback address', () => {
    assert.throws(() => parseConfig({ ...base, server: { host: '0.0.0.0' } }, 'test', {}), /auth\.mode: "none" is only accepted when server\.host is a loopback address/);
  });
  it('jwt needs an issuer, keys and at least one tenant', () => {
    assert.throws(() => parseConfig({ ...base, auth: { mode: 'jwt' } }, 'test', {}), (err: Error) => /auth\.issuer: required/.test(err.message) && /auth: jwt needs keys/.test(err.message) && /tenants: with auth\.mode jwt/.test(err.message));
  });
  it('HS algorithms need allowHmac', () => {
    assert.throws(
      () => parseConfig({ ...base, auth: { mode: 'jwt', issuer: 'i', jwksUrl: 'https://i/jwks', algorithms: ['HS256'] }, tenants: [{ name: 't', endpoints: ['*'] }] }, 'test', {}),
      /auth\.algorithms: HS\* algorithms need allowHmac: true/,
    );
  });
  it('tenant endpoints must exist', () => {
    assert.throws(() => parseConfig({ ...base, tenants: [{ name: 't', endpoints: ['/nope'] }] }, 'test', {}), /tenants\[0\]\.endpoints\[0\]: no endpoint has path "\/nope"/);
  });
});

describe('modern: the requestState key', () => {
  const KEY = 'k'.repeat(32);
  const dir = mkdtempSync(join(tmpdir(), 'swb-config-modern-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const minimal = 'upstreams:\n  - {name: a, transport: stdio, command: node}\nendpoints:\n  - {path: /mcp, upstreams: [a]}\n';

  it('defaults: no key (a random one per process), no previous keys, five minutes to retry, 16 rounds waiting per principal', () => {
    assert.deepEqual(parseConfig(doc(), 'test', {}).modern, { requestStatePreviousKeys: [], continuationTtlMs: 300_000, continuationsPerPrincipal: 16, listenUrisMax: 100, listensPerPrincipal: 64 });
  });

  it('a key shorter than 32 characters is refused, and the problem never repeats it', () => {
    const list = problems(doc({ modern: { requestStateKey: 'short-secret-value' } }));
    hasProblem(list, 'modern.requestStateKey', 'at least 32 characters');
    assert.ok(!list.join('\n').includes('short-secret-value'));
    hasProblem(problems(doc({ modern: { requestStateKey: KEY, requestStatePreviousKeys: ['too-short'] } })), 'modern.requestStatePreviousKeys[0]');
  });

  it('previous keys need a current key; the TTL is at least one second', () => {
    hasProblem(problems(doc({ modern: { requestStatePreviousKeys: [KEY] } })), 'modern.requestStatePreviousKeys', 'set requestStateKey');
    hasProblem(problems(doc({ modern: { continuationTtlMs: 999 } })), 'modern.continuationTtlMs');
  });

  it('SWITCHBOARD_REQUEST_STATE_KEY and SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS (comma-separated) override the file', () => {
    const file = join(dir, 'modern.yaml');
    writeFileSync(file, `modern:\n  requestStateKey: ${'f'.repeat(40)}\n  continuationTtlMs: 60000\n${minimal}`);
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(32);
    const cfg = loadConfig(file, { SWITCHBOARD_REQUEST_STATE_KEY: KEY, SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS: ` ${a}, ${b} ,` });
    assert.deepEqual(cfg.modern, { requestStateKey: KEY, requestStatePreviousKeys: [a, b], continuationTtlMs: 60_000, continuationsPerPrincipal: 16, listenUrisMax: 100, listensPerPrincipal: 64 });
    const bare = join(dir, 'bare.yaml');
    writeFileSync(bare, minimal);
    assert.equal(loadConfig(bare, { SWITCHBOARD_REQUEST_STATE_KEY: KEY }).modern.requestStateKey, KEY);
    assert.equal(loadConfig(bare, {}).modern.requestStateKey, undefined);
  });

  it('a value from an environment override is taken as it is: a ${ in it is no reference (found by a review)', () => {
    // A secret with "${" in it was mangled (or refused as naming an unset variable), and an override could pull in another variable.
    const file = join(dir, 'override-verbatim.yaml');
    writeFileSync(file, minimal);
    const key = 'k3y-${NOT_SET}-and-${OTHER}-long-enough!';
    const previous = 'p-${OTHER}-' + 'x'.repeat(32);
    const env = { OTHER: 'pulled-in', SWITCHBOARD_REQUEST_STATE_KEY: key, SWITCHBOARD_REQUEST_STATE_PREVIOUS_KEYS: previous, REDIS_URL: 'redis://:pa$${OTHER}@redis:6379/0' };
    const cfg = loadConfig(file, env);
    assert.equal(cfg.modern.requestStateKey, key);
    assert.deepEqual(cfg.modern.requestStatePreviousKeys, [previous]);
    assert.equal(cfg.store?.redis?.url, 'redis://:pa$${OTHER}@redis:6379/0');
    // The file's own references are still replaced.
    writeFileSync(file, `logging:\n  level: \${LEVEL}\n${minimal}`);
    assert.equal(loadConfig(file, { LEVEL: 'debug', SWITCHBOARD_REQUEST_STATE_KEY: key }).logging.level, 'debug');
  });
});

// A browser's Origin header is its serialized origin (scheme://host[:port], lower case, default port left
// out, no slash): an allowedOrigins entry written any other way never matched, and refused every browser
// request with 403. They are put in that form at load, and an entry that is no origin is a problem.
describe('parseConfig: server.allowedOrigins and allowedHosts as the headers spell them', () => {
  it('writes each origin as a browser sends it', () => {
    const cfg = parseConfig(doc({ server: { allowedOrigins: ['https://App.Example.com/', 'http://localhost:5173', 'https://x.example:443', '*', 'null'], allowedHosts: ['GW.Example.com', 'gw.example.com:8443'] } }), 'test', {}, '/base');
    assert.deepEqual(cfg.server.allowedOrigins, ['https://app.example.com', 'http://localhost:5173', 'https://x.example', '*', 'null']);
    assert.deepEqual(cfg.server.allowedHosts, ['gw.example.com', 'gw.example.com:8443']);
  });

  it('refuses an entry that is no origin: a path, a query, credentials, not a URL', () => {
    const list = problems(doc({ server: { allowedOrigins: ['https://app.example.com/ui', 'https://app.example.com?x=1', 'https://u:p@app.example.com', 'app.example.com'] } }));
    for (const i of [0, 1, 2, 3]) hasProblem(list, `server.allowedOrigins[${i}]`, 'origin');
  });
});

// Two listeners given one port on overlapping addresses started the MCP listener and the upstreams, then
// failed "address already in use"; check-config now says so.
describe('parseConfig: listeners on one port', () => {
  it('refuses admin.port or metrics.port equal to another listener on an overlapping address', () => {
    hasProblem(problems(doc({ admin: { enabled: true, port: 8080 } })), 'admin.port', 'server.port');
    hasProblem(problems(doc({ server: { host: '0.0.0.0', port: 9000 }, auth: { mode: 'jwt', issuer: 'https://i.example', jwksUrl: 'https://i.example/jwks' }, tenants: [{ name: 't', endpoints: ['*'] }], metrics: { host: '127.0.0.1', port: 9000 } })), 'metrics.port', 'server.port');
  });

  it('accepts one port on two distinct addresses, port 0 twice, and a disabled listener', () => {
    parseConfig(doc({ metrics: { host: '127.0.0.2', port: 8080 } }), 'test', {}, '/base');
    parseConfig(doc({ server: { port: 0 }, metrics: { port: 0 }, admin: { enabled: true, port: 0 } }), 'test', {}, '/base');
    parseConfig(doc({ metrics: { enabled: false, port: 8080 } }), 'test', {}, '/base');
  });

  // "[::1]" is how a URL writes the address; listen() looks it up as a host name, finds none, and serve
  // failed after its upstreams had started ("cannot listen on [[::1]]:8080") where check-config said ok.
  it('refuses a listener address in brackets, saying how to write it', () => {
    hasProblem(problems(doc({ server: { host: '[::1]' } })), 'server.host', '"::1"');
    hasProblem(problems(doc({ metrics: { host: '[::]' } })), 'metrics.host', '"::"');
    hasProblem(problems(doc({ admin: { enabled: true, host: '[::1]' } })), 'admin.host', '"::1"');
    assert.equal(parseConfig(doc({ server: { host: '::1' } }), 'test', {}, '/base').server.host, '::1');
  });
});

// The HTTP client refuses such a header at every request: accepted, the upstream never came up
// ("could not be reached: invalid authorization header") and restarted for ever, where check-config said ok.
describe('parseConfig: headers the gateway sends', () => {
  const remote = (headers: Record<string, string>) => ({ name: 'a', transport: 'streamable-http', url: 'https://mcp.example/mcp', headers });

  it('refuses a value with a line break, naming the header and never quoting the value', () => {
    const list = problems(doc({ upstreams: [remote({ authorization: '${TOKEN}' })] }), { TOKEN: 'Bearer s3cret-value\n' });
    hasProblem(list, 'upstreams[0].headers.authorization', 'line breaks');
    assert.ok(!list.join('\n').includes('s3cret-value'), JSON.stringify(list));
  });

  it('refuses a name that is no header name, and an embeddings header with a line break', () => {
    hasProblem(problems(doc({ upstreams: [remote({ 'x api key': 'v' })] })), 'upstreams[0].headers.x api key', 'header name');
    const embeddings = { url: 'https://e.example/v1/embeddings', model: 'm', headers: { authorization: 'Bearer k\r\n' } };
    hasProblem(problems(doc({ endpoints: [{ path: '/mcp', upstreams: ['a'], tools: { exposure: 'search', embeddings } }] })), 'endpoints[0].tools.embeddings.headers.authorization', 'line breaks');
  });

  it('accepts a tab and Latin-1 as the client does', () => {
    const cfg = parseConfig(doc({ upstreams: [remote({ 'x-note': 'a\tb \u00e9' })] }), 'test', {}, '/base');
    assert.equal((cfg.upstreams[0] as { headers: Record<string, string> }).headers['x-note'], 'a\tb \u00e9');
  });
});
