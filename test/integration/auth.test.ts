// Attacks on the gateway's bearer-token authentication, each answered with the status and challenge the
// MCP authorization spec (RFC 6750 / RFC 9728) asks for: 401 + `WWW-Authenticate: Bearer
// resource_metadata="…"` (with error="invalid_token" when a token was presented), 400 invalid_request
// for a malformed request, 403 for a tenant that may not use the endpoint, 403 insufficient_scope for a
// call that needs a scope the token lacks. A real gateway fronts the conformance fixture over stdio;
// keys come from a JWKS server the test runs (and can rotate) or from a PEM file.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SignJWT } from 'jose';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import {
  ISSUER,
  JwksServer,
  PUBLIC_URL,
  connectWithToken,
  deleteSession,
  initializeBody,
  makeKey,
  mcpRequest,
  openSession,
  parseChallenge,
  rawRequest,
  signHmac,
  signToken,
  swapPayload,
  unsignedToken,
  type ClientKind,
  type Json,
  type RpcReply,
  type TestKey,
} from '../helpers/tokens.js';
import { moveClockAhead, restoreClock, withClockAhead } from '../helpers/wait.js';

// ---------------------------------------------------------------------------------------------------
// Configuration and assertions
// ---------------------------------------------------------------------------------------------------

const METADATA_MCP = `${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp`;
/** What the legacy HTTP+SSE paths (/sse, /messages) name: the gateway's own metadata, whose resource covers them. */
const METADATA_ROOT = `${PUBLIC_URL}/.well-known/oauth-protected-resource`;
const TOLERANCE = 2;
/** Configured on the main gateway with allowHmac off: it must never verify anything. */
const UNUSED_HMAC_SECRET = 'a-real-hmac-secret-of-32-chars-or-more!!';

const fixture = { name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const };

const TENANTS = [
  {
    name: 'acme',
    endpoints: ['/mcp'],
    tools: { allow: ['test_simple_text', 'test_tool_with_progress', { match: 'test_error_handling', scopes: ['tools:errors'] }] },
  },
  { name: 'globex', endpoints: ['/mcp'] },
  { name: 'initech', endpoints: ['/other'] },
];

function gatewayConfig(auth: Record<string, unknown>) {
  return {
    server: { publicUrl: PUBLIC_URL },
    auth: { mode: 'jwt' as const, issuer: ISSUER, audience: [PUBLIC_URL], clockToleranceSec: TOLERANCE, ...auth },
    tenants: TENANTS,
    upstreams: [fixture],
    endpoints: [
      { path: '/mcp', upstreams: ['fixture'] },
      { path: '/other', upstreams: ['fixture'] },
    ],
  };
}

const listTools = (id: number | string = 2) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const callTool = (name: string, id: number | string = 3, args: Json = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** Status, a JSON-RPC error body, and a Bearer challenge naming the endpoint's metadata (and the error, when given). */
function expectChallenge(r: { status: number; headers: Headers | Record<string, unknown>; text: string }, status: number, error: string | undefined, metadata = METADATA_MCP): Record<string, string> {
  assert.equal(r.status, status, `expected HTTP ${status}, got ${r.status}: ${r.text}`);
  const www = r.headers instanceof Headers ? r.headers.get('www-authenticate') : (r.headers['www-authenticate'] as string | undefined);
  const c = parseChallenge(www);
  assert.equal(c.scheme, 'Bearer');
  assert.equal(c.params.resource_metadata, metadata);
  assert.equal(c.params.error, error, `error in ${www}`);
  const body = JSON.parse(r.text) as Json;
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(typeof body.error?.message, 'string');
  assert.equal('result' in body, false);
  return c.params;
}

function expectOk(r: RpcReply, what: string): Json {
  assert.equal(r.status, 200, `${what}: HTTP ${r.status} ${r.text}`);
  assert.ok(r.json && 'result' in r.json, `${what}: a result: ${r.text}`);
  return r.json.result as Json;
}

// ---------------------------------------------------------------------------------------------------
// The main gateway: JWKS from the test's server
// ---------------------------------------------------------------------------------------------------

describe('auth: bearer token attacks (JWKS)', () => {
  let jwks: JwksServer;
  let key: TestKey;
  /** A different RSA key that claims the trusted key's kid. */
  let impostor: TestKey;
  let stranger: TestKey;
  /** A published RS512 key: RS512 is not among the allowed algorithms. */
  let rs512: TestKey;
  let gw: RunningGateway;
  const logLines: string[] = [];
  const tokensSeen: string[] = [];
  const tok = async (o: Parameters<typeof signToken>[1] = {}, k?: TestKey) => {
    const t = await signToken(k ?? key, o);
    tokensSeen.push(t);
    return t;
  };

  before(async () => {
    key = await makeKey('k1');
    impostor = await makeKey('k1');
    stranger = await makeKey('k-unknown');
    rs512 = await makeKey('k512', 'RS512');
    jwks = await JwksServer.start([key.publicJwk, rs512.publicJwk]);
    gw = await startGateway(gatewayConfig({ jwksUrl: jwks.url, jwksCooldownMs: 0, hmacSecret: UNUSED_HMAC_SECRET, allowHmac: false }), { logLines });
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  it('control: a valid token initializes a session', async () => {
    const sid = await openSession(gw, await tok());
    assert.match(sid, /^[\x21-\x7e]+$/);
  });

  it('no token: 401 with a bare Bearer challenge naming the resource metadata (no error code)', async () => {
    expectChallenge(await mcpRequest(gw, initializeBody()), 401, undefined);
    // GET and DELETE too, and the other endpoint names its own metadata document.
    expectChallenge(await mcpRequest(gw, undefined, { method: 'GET', sid: 'x' }), 401, undefined);
    expectChallenge(await mcpRequest(gw, undefined, { method: 'DELETE', sid: 'x' }), 401, undefined);
    expectChallenge(await mcpRequest(gw, initializeBody(), { path: '/other' }), 401, undefined, `${PUBLIC_URL}/.well-known/oauth-protected-resource/other`);
  });

  const invalid: Array<[string, () => Promise<string>]> = [
    ['alg none (unsecured JWT)', async () => unsignedToken()],
    ['alg none spelled "None" with a typ', async () => unsignedToken({}, { alg: 'None', typ: 'JWT' })],
    ['HS256 signed with the RSA public key PEM as the secret (RS/HS confusion)', async () => signHmac(key.spki, { kid: 'k1' })],
    ['HS256 signed with the public JWK JSON as the secret (RS/HS confusion)', async () => signHmac(JSON.stringify(key.publicJwk), { kid: 'k1' })],
    ['HS256 with the configured hmacSecret while allowHmac is off', async () => signHmac(UNUSED_HMAC_SECRET)],
    ['HS256 with the configured hmacSecret and the trusted kid while allowHmac is off', async () => signHmac(UNUSED_HMAC_SECRET, { kid: 'k1' })],
    ['RS512 with a published key (algorithm not in the allow list)', async () => signToken(rs512)],
    ['wrong audience', async () => signToken(key, { aud: 'https://evil.test' })],
    ['audience that only starts with the accepted one', async () => signToken(key, { aud: `${PUBLIC_URL}.evil.test` })],
    ['audience list without the accepted one', async () => signToken(key, { aud: ['https://a.test', 'https://b.test'] })],
    ['wrong issuer', async () => signToken(key, { iss: 'https://evil-issuer.test' })],
    ['expired (beyond the clock tolerance)', async () => signToken(key, { expIn: -60 })],
    ['nbf in the future (beyond the clock tolerance)', async () => signToken(key, { nbfIn: 60 })],
    ['no exp claim', async () => signToken(key, { expIn: null })],
    ['no sub claim', async () => signToken(key, { noSub: true })],
    ['no tenant claim', async () => signToken(key, { tenant: undefined })],
    ['unknown kid', async () => signToken(stranger)],
    ['signature from another key with the same kid', async () => signToken(impostor)],
    ['no kid, signed by an untrusted key', async () => signToken(stranger, { kid: null })],
    ['payload swapped under a valid signature (tenant escalation)', async () => swapPayload(await signToken(key, { tenant: 'initech' }), { tenant: 'acme' })],
    ['not a JWT at all', async () => 'abc.def.ghi'],
  ];
  for (const [name, make] of invalid) {
    it(`${name}: 401 invalid_token`, async () => {
      const t = await make();
      tokensSeen.push(t);
      expectChallenge(await mcpRequest(gw, initializeBody(), { token: t }), 401, 'invalid_token');
    });
  }

  it(
    'a sub that is not a string (RFC 7519 §4.1.2: StringOrURI) is refused: 401 invalid_token',
    async () => {
      for (const sub of [5, { id: 'alice' }, ['alice'], true]) {
        const t = await tok({ claims: { sub } });
        expectChallenge(await mcpRequest(gw, initializeBody(), { token: t }), 401, 'invalid_token');
      }
    },
  );

  it('a token within the clock tolerance is accepted (exp just passed, nbf just ahead)', async () => {
    // exp = now: expired without the tolerance, inside it with it (2 s).
    const justExpired = await tok({ expIn: 0 });
    const almostValid = await tok({ nbfIn: 1 });
    for (const t of [justExpired, almostValid]) expectOk(await mcpRequest(gw, initializeBody(), { token: t }), 'initialize');
  });

  it('a token typed as another kind of JWT (RFC 9068 §4: logout, security event, DPoP proof) is refused: 401 invalid_token', async () => {
    // The same issuer signs these with the same keys: without the typ check any of them passed as an access token.
    for (const typ of ['logout+jwt', 'application/logout+jwt', 'secevent+jwt', 'dpop+jwt', 'id_token+jwt', 'JOSE']) {
      const r = await mcpRequest(gw, initializeBody(), { token: await tok({ typ }) });
      expectChallenge(r, 401, 'invalid_token');
      assert.match(JSON.parse(r.text).error.message, /"typ"/, typ);
    }
  });

  it('a forged token whose header names a "crit" extension with a line break or a character past Latin-1: 401 invalid_token, not 500', async () => {
    // jose quotes the unrecognized extension in its message, checked before any signature: anyone, with no
    // key, chose text of the WWW-Authenticate header, which Node refuses to write (500, an error log line).
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    for (const name of ['a\r\nx-injected: 1', '\u0100', 'é', 'tab\there']) {
      const t = `${b64({ alg: 'RS256', kid: 'k1', crit: [name] })}.${b64({ sub: 'mallory', tenant: 'acme' })}.AAAA`;
      const r = await mcpRequest(gw, initializeBody(), { token: t });
      const params = expectChallenge(r, 401, 'invalid_token');
      // RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E.
      assert.match(params.error_description ?? '', /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/, JSON.stringify(name));
    }
  });

  it('keys a forged token carries or points to (jwk, jku, x5u, x5c headers) are never used nor fetched: 401 invalid_token', async () => {
    const attacker = await makeKey('attacker');
    const theirs = await JwksServer.start([attacker.publicJwk]);
    try {
      const headers = [{ jwk: attacker.publicJwk }, { jku: theirs.url }, { x5u: theirs.url }, { jku: theirs.url, kid: 'k1' }, { x5c: ['MIIB'] }];
      for (const extra of headers) {
        const kid = 'kid' in extra ? {} : { kid: 'attacker' };
        const t = await new SignJWT({ iss: ISSUER, aud: PUBLIC_URL, sub: 'mallory', tenant: 'acme', exp: Math.floor(Date.now() / 1000) + 300 })
          .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...kid, ...extra })
          .sign(attacker.privateKey);
        expectChallenge(await mcpRequest(gw, initializeBody(), { token: t }), 401, 'invalid_token');
      }
      assert.equal(theirs.fetches, 0, 'the jku / x5u URL was fetched');
    } finally {
      await theirs.close();
    }
  });

  it('a kid with path, SQL or prototype text is only ever a name: 401 invalid_token', async () => {
    for (const kid of ['../../../../etc/passwd', "' OR '1'='1", '__proto__', 'k1\u0000', `${'k'.repeat(4000)}`]) {
      expectChallenge(await mcpRequest(gw, initializeBody(), { token: await signToken(stranger, { kid }) }), 401, 'invalid_token');
    }
  });

  it('the access token types are accepted by default: at+jwt in any spelling, JWT, and no typ at all', async () => {
    for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT', 'JWT', 'jwt', null]) {
      expectOk(await mcpRequest(gw, initializeBody(), { token: await tok({ typ }) }), `typ ${typ}`);
    }
  });

  it('an iat in the future beyond the clock tolerance is refused; within it, accepted', async () => {
    const now = Math.floor(Date.now() / 1000);
    const r = await mcpRequest(gw, initializeBody(), { token: await tok({ claims: { iat: now + 60 } }) });
    expectChallenge(r, 401, 'invalid_token');
    assert.match(JSON.parse(r.text).error.message, /"iat"/);
    expectChallenge(await mcpRequest(gw, initializeBody(), { token: await tok({ claims: { iat: now + TOLERANCE + 2 } }) }), 401, 'invalid_token');
    expectOk(await mcpRequest(gw, initializeBody(), { token: await tok({ claims: { iat: now + 1 } }) }), 'iat within the tolerance');
  });

  it('just beyond the clock tolerance is refused', async () => {
    // exp = now - (tolerance + 1) is out, whatever the sub-second position of the clock.
    expectChallenge(await mcpRequest(gw, initializeBody(), { token: await tok({ expIn: -(TOLERANCE + 2) }) }), 401, 'invalid_token');
    expectChallenge(await mcpRequest(gw, initializeBody(), { token: await tok({ nbfIn: TOLERANCE + 2 }) }), 401, 'invalid_token');
  });

  for (const header of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer a,b', 'Bearer\ta']) {
    it(`malformed Bearer Authorization header ${JSON.stringify(header)}: 400 invalid_request`, async () => {
      const r = await mcpRequest(gw, initializeBody(), { headers: { authorization: header } });
      expectChallenge(r, 400, 'invalid_request');
    });
  }

  // RFC 6750 §3: a request that "attempted using an unsupported authentication method" lacks authentication
  // information: 401 with the challenge and no error code, as with no header, so a client configured with
  // another scheme (an API key as Basic, a "Token" header) still finds the resource metadata and signs in.
  for (const header of ['Basic xyz', 'Token abc', 'ApiKey k-123', 'Negotiate', 'basic']) {
    it(`another scheme ${JSON.stringify(header)}: 401 with the challenge and no error code`, async () => {
      const r = await mcpRequest(gw, initializeBody(), { headers: { authorization: header } });
      expectChallenge(r, 401, undefined);
    });
  }

  it('the scheme name is case-insensitive (RFC 7235 §2.1): "bearer <token>" and "BEARER <token>" are accepted', async () => {
    const t = await tok();
    for (const scheme of ['bearer', 'BEARER']) expectOk(await mcpRequest(gw, initializeBody(), { headers: { authorization: `${scheme} ${t}` } }), scheme);
  });

  it('duplicate Authorization headers (even two copies of one valid token): 400 invalid_request', async () => {
    const a = await tok();
    const b = await tok({ sub: 'bob' });
    for (const pair of [
      [a, a],
      [a, b],
      [a, 'garbage'],
    ]) {
      const r = await rawRequest(
        gw,
        'POST',
        '/mcp',
        [
          ['accept', 'application/json, text/event-stream'],
          ['content-type', 'application/json'],
          ['authorization', `Bearer ${pair[0]}`],
          ['authorization', `Bearer ${pair[1]}`],
        ],
        JSON.stringify(initializeBody()),
      );
      expectChallenge({ status: r.status, headers: r.headers as Record<string, unknown>, text: r.body }, 400, 'invalid_request');
    }
  });

  it('a token in the query is refused even with a valid header: 400 invalid_request', async () => {
    const t = await tok();
    // The token as the whole query, or after a scheme, was served before 2026-12-07.
    for (const query of [`?access_token=${t}`, `?token=${t}`, `?x=1&access_token=${t}`, `?q=${t}`, `?${t}`, `?auth=Bearer%20${t}`, `?auth=Bearer+${t}`]) {
      const withHeader = await mcpRequest(gw, initializeBody(), { token: t, query });
      expectChallenge(withHeader, 400, 'invalid_request');
      const alone = await mcpRequest(gw, initializeBody(), { query });
      expectChallenge(alone, 400, 'invalid_request');
    }
    // On a session's requests and the legacy transport as well.
    const sid = await openSession(gw, t);
    expectChallenge(await mcpRequest(gw, listTools(), { token: t, sid, query: `?access_token=${t}` }), 400, 'invalid_request');
    expectChallenge(await mcpRequest(gw, undefined, { method: 'GET', token: t, sid, query: `?access_token=${t}` }), 400, 'invalid_request');
    const sse = await fetch(`${gw.base}/sse?access_token=${t}`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${t}` }, signal: AbortSignal.timeout(5000) });
    // The legacy transport's paths name the gateway's own metadata, which covers them (see legacy-sse-oauth-discovery).
    expectChallenge({ status: sse.status, headers: sse.headers, text: await sse.text() }, 400, 'invalid_request', METADATA_ROOT);
  });

  it('serves protected resource metadata (RFC 9728) without a token', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource', PUBLIC_URL],
      ['/.well-known/oauth-protected-resource/mcp', `${PUBLIC_URL}/mcp`],
      ['/.well-known/oauth-protected-resource/other', `${PUBLIC_URL}/other`],
    ] as const) {
      const res = await fetch(`${gw.base}${path}`, { signal: AbortSignal.timeout(5000) });
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const doc = (await res.json()) as Json;
      assert.equal(doc.resource, resource, path);
      assert.deepEqual(doc.authorization_servers, [ISSUER], path);
      assert.deepEqual(doc.bearer_methods_supported, ['header']);
    }
    // The URL a 401 names is the document for that endpoint.
    const r = await mcpRequest(gw, initializeBody());
    const url = new URL(parseChallenge(r.headers.get('www-authenticate')).params.resource_metadata!);
    const res = await fetch(`${gw.base}${url.pathname}`, { signal: AbortSignal.timeout(5000) });
    assert.equal(((await res.json()) as Json).resource, `${PUBLIC_URL}/mcp`);
  });

  it('a tenant not granted the endpoint, or not configured at all: 403', async () => {
    const initech = await tok({ tenant: 'initech' });
    const r = await mcpRequest(gw, initializeBody(), { token: initech });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.json?.error?.code, -32600);
    // The same token works where it is granted.
    expectOk(await mcpRequest(gw, initializeBody(), { token: initech, path: '/other' }), 'initialize on /other');
    const unknown = await tok({ tenant: 'nobody' });
    for (const path of ['/mcp', '/other']) {
      const u = await mcpRequest(gw, initializeBody(), { token: unknown, path });
      assert.equal(u.status, 403, u.text);
    }
    const sse = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${unknown}` }, signal: AbortSignal.timeout(5000) });
    assert.equal(sse.status, 403);
    await sse.body?.cancel();
  });

  it('tools/call needing a scope the token lacks: 403 insufficient_scope with the scope', async () => {
    const t = await tok({ scope: 'tools:read' });
    const sid = await openSession(gw, t);
    const r = await mcpRequest(gw, callTool('test_error_handling'), { token: t, sid });
    const params = expectChallenge(r, 403, 'insufficient_scope');
    assert.equal(params.scope, 'tools:errors');
    // A tool the token may use still works on the session.
    expectOk(await mcpRequest(gw, callTool('test_simple_text', 4), { token: t, sid }), 'test_simple_text');
    // With the scope (a new session), the call goes through.
    const scoped = await tok({ scope: 'tools:read tools:errors' });
    const sid2 = await openSession(gw, scoped);
    const result = expectOk(await mcpRequest(gw, callTool('test_error_handling', 5), { token: scoped, sid: sid2 }), 'test_error_handling');
    assert.equal(result.isError, true);
  });

  it(
    'step-up: after 403 insufficient_scope, the same session accepts the call with a token that has the scope',
    async () => {
      const t = await tok({ scope: 'tools:read' });
      const sid = await openSession(gw, t);
      expectChallenge(await mcpRequest(gw, callTool('test_error_handling'), { token: t, sid }), 403, 'insufficient_scope');
      const upgraded = await tok({ scope: 'tools:read tools:errors' });
      expectOk(await mcpRequest(gw, callTool('test_error_handling', 4), { token: upgraded, sid }), 'after step-up');
    },
  );

  it(
    'scope downgrade: a refreshed token without the scope no longer reaches the scoped tool on an existing session',
    async () => {
      const scoped = await tok({ scope: 'tools:errors' });
      const sid = await openSession(gw, scoped);
      expectOk(await mcpRequest(gw, callTool('test_error_handling'), { token: scoped, sid }), 'with the scope');
      const narrowed = await tok({ scope: 'tools:read' });
      expectChallenge(await mcpRequest(gw, callTool('test_error_handling', 4), { token: narrowed, sid }), 403, 'insufficient_scope');
    },
  );

  it('session hijack: another subject, or another tenant, gets 404 on POST, GET and DELETE; the owner goes on', async () => {
    const alice = await tok({ sub: 'alice', tenant: 'acme' });
    const sid = await openSession(gw, alice);
    const bob = await tok({ sub: 'bob', tenant: 'acme' });
    const aliceAtGlobex = await tok({ sub: 'alice', tenant: 'globex' });
    for (const thief of [bob, aliceAtGlobex]) {
      const post = await mcpRequest(gw, listTools(), { token: thief, sid });
      assert.equal(post.status, 404, post.text);
      assert.equal(post.json?.error?.code, -32600);
      const get = await mcpRequest(gw, undefined, { method: 'GET', token: thief, sid });
      assert.equal(get.status, 404, get.text);
      const del = await mcpRequest(gw, undefined, { method: 'DELETE', token: thief, sid });
      assert.equal(del.status, 404, del.text);
      // Indistinguishable from a session that never existed.
      const none = await mcpRequest(gw, listTools(), { token: thief, sid: '00000000-0000-4000-8000-000000000000' });
      assert.equal(none.status, 404);
      assert.deepEqual(post.json, none.json);
    }
    const tools = expectOk(await mcpRequest(gw, listTools(), { token: alice, sid }), 'owner tools/list');
    assert.ok((tools.tools as Json[]).some((t) => t.name === 'test_simple_text'));
    // The owner's standalone stream opens, and DELETE by the owner ends the session.
    assert.equal((await mcpRequest(gw, undefined, { method: 'GET', token: alice, sid })).status, 200);
    assert.equal(await deleteSession(gw, alice, sid), 200);
    assert.equal((await mcpRequest(gw, listTools(), { token: alice, sid })).status, 404);
  });

  it('legacy /sse: no token → 401; another subject posting to the session → 404; the owner → 202', async () => {
    const noToken = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5000) });
    expectChallenge({ status: noToken.status, headers: noToken.headers, text: await noToken.text() }, 401, undefined, METADATA_ROOT);
    const bad = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${unsignedToken()}` }, signal: AbortSignal.timeout(5000) });
    expectChallenge({ status: bad.status, headers: bad.headers, text: await bad.text() }, 401, 'invalid_token', METADATA_ROOT);

    const alice = await tok({ sub: 'alice' });
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 10_000);
    const stream = await fetch(`${gw.base}/sse`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${alice}` }, signal: ac.signal });
    try {
      assert.equal(stream.status, 200);
      const reader = stream.body!.getReader();
      let buf = '';
      const deadline = Date.now() + 5000;
      while (!/event: endpoint\r?\ndata: [^\r\n]+\r?\n/.test(buf) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += new TextDecoder().decode(value);
      }
      const endpoint = /event: endpoint\r?\ndata: ([^\r\n]+)/.exec(buf)?.[1];
      assert.ok(endpoint, `an endpoint event: ${buf}`);
      assert.match(endpoint, /^\/messages\?sessionId=/);
      const postAs = (token: string | undefined) =>
        fetch(`${gw.base}${endpoint}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(initializeBody()),
          signal: AbortSignal.timeout(5000),
        });
      const bob = await tok({ sub: 'bob' });
      const thief = await postAs(bob);
      assert.equal(thief.status, 404, await thief.text());
      const otherTenant = await postAs(await tok({ sub: 'alice', tenant: 'globex' }));
      assert.equal(otherTenant.status, 404, await otherTenant.text());
      const anonymous = await postAs(undefined);
      expectChallenge({ status: anonymous.status, headers: anonymous.headers, text: await anonymous.text() }, 401, undefined, METADATA_ROOT);
      const owner = await postAs(alice);
      assert.equal(owner.status, 202, await owner.text());
      await reader.cancel().catch(() => {});
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
  });

  it('a token that expires mid-session: 401 on that request, then the same session goes on with a refreshed token', async () => {
    const short = await tok({ sub: 'carol', expIn: 1 });
    const sid = await openSession(gw, short);
    expectOk(await mcpRequest(gw, callTool('test_simple_text'), { token: short, sid }), 'before expiry');
    const exp = JSON.parse(Buffer.from(short.split('.')[1]!, 'base64url').toString()).exp as number;
    // Expired once now >= exp + tolerance (whole seconds): the clock moves just past that.
    await withClockAhead(Math.max(0, (exp + TOLERANCE) * 1000 - Date.now()) + 100, async () => {
      expectChallenge(await mcpRequest(gw, callTool('test_simple_text', 4), { token: short, sid }), 401, 'invalid_token');
    });
    const refreshed = await tok({ sub: 'carol' });
    const result = expectOk(await mcpRequest(gw, callTool('test_simple_text', 5), { token: refreshed, sid }), 'after refresh');
    assert.equal((result.content as Json[])[0]?.text, 'This is a simple text response for testing.');
    assert.equal(await deleteSession(gw, refreshed, sid), 200);
  });

  for (const kind of ['streamable-http', 'sse'] as const satisfies readonly ClientKind[]) {
    it(`the SDK ${kind} client works end to end with a valid token, and is refused without one`, async () => {
      const c = await connectWithToken(gw, kind, await tok({ sub: `sdk-${kind}` }));
      try {
        assert.equal(c.client.getServerVersion()?.name, 'switchboard');
        const { tools } = await c.client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['test_simple_text', 'test_tool_with_progress']);
        const r = await c.client.callTool({ name: 'test_simple_text', arguments: {} });
        assert.equal((r.content as Json[])[0]?.text, 'This is a simple text response for testing.');
      } finally {
        await c.close();
      }
      await assert.rejects(connectWithToken(gw, kind, unsignedToken()));
    });
  }

  it('the SDK client sees 401 when its token expires mid-session and continues after a refresh', async () => {
    const short = await tok({ sub: 'dave', expIn: 1 });
    const c = await connectWithToken(gw, 'streamable-http', short);
    try {
      const sid = c.transport.sessionId;
      await c.client.callTool({ name: 'test_simple_text', arguments: {} });
      const exp = JSON.parse(Buffer.from(short.split('.')[1]!, 'base64url').toString()).exp as number;
      await withClockAhead(Math.max(0, (exp + TOLERANCE) * 1000 - Date.now()) + 100, async () => {
        await assert.rejects(c.client.callTool({ name: 'test_simple_text', arguments: {} }), (err: unknown) => err instanceof StreamableHTTPError && err.code === 401);
      });
      c.setToken(await tok({ sub: 'dave' }));
      const r = await c.client.callTool({ name: 'test_simple_text', arguments: {} });
      assert.equal((r.content as Json[])[0]?.text, 'This is a simple text response for testing.');
      assert.equal(c.transport.sessionId, sid, 'the same session');
    } finally {
      await c.close();
    }
  });

  it('no token ever reaches the log', () => {
    assert.ok(logLines.length > 0, 'log lines were captured');
    assert.ok(logLines.some((l) => l.includes('request refused by authentication or policy')));
    for (const t of tokensSeen) {
      const sig = t.split('.')[2];
      for (const line of logLines) {
        assert.ok(!line.includes(t), `a token in the log: ${line}`);
        if (sig && sig.length > 16) assert.ok(!line.includes(sig), `a token signature in the log: ${line}`);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// JWKS rotation
// ---------------------------------------------------------------------------------------------------

describe('auth: JWKS rotation without a restart', () => {
  let jwks: JwksServer;
  let k1: TestKey;
  let k2: TestKey;
  let gw: RunningGateway;
  const COOLDOWN = 100;
  const MAX_AGE = 600;

  before(async () => {
    k1 = await makeKey('rot-1');
    k2 = await makeKey('rot-2', 'ES256');
    jwks = await JwksServer.start([k1.publicJwk]);
    gw = await startGateway({
      ...gatewayConfig({ jwksUrl: jwks.url, jwksCooldownMs: COOLDOWN, jwksCacheMaxAgeMs: MAX_AGE }),
    });
  });
  after(async () => {
    restoreClock();
    await gw?.close();
    await jwks?.close();
  });

  it('accepts a new kid once published, and refuses the old key once it is withdrawn', async () => {
    const old = await signToken(k1, { sub: 'rot' });
    const sid = await openSession(gw, old);
    const fresh = await signToken(k2, { sub: 'rot' });
    // Not yet published.
    expectChallenge(await mcpRequest(gw, listTools(), { token: fresh, sid }), 401, 'invalid_token');

    jwks.setKeys([k1.publicJwk, k2.publicJwk]);
    // jose refetches for an unknown kid at most once per cooldown, and keeps a key set for MAX_AGE:
    // the clock moves past each instead of the test sleeping through it.
    moveClockAhead(COOLDOWN + 50);
    const before = jwks.fetches;
    expectOk(await mcpRequest(gw, listTools(3), { token: fresh, sid }), 'new kid after publication');
    assert.ok(jwks.fetches > before, 'the unknown kid made the gateway fetch the key set again');
    expectOk(await mcpRequest(gw, listTools(4), { token: old, sid }), 'old kid while both are published');

    jwks.setKeys([k2.publicJwk]);
    moveClockAhead(Math.max(COOLDOWN, MAX_AGE) + 100);
    expectChallenge(await mcpRequest(gw, listTools(5), { token: old, sid }), 401, 'invalid_token');
    expectChallenge(await mcpRequest(gw, initializeBody(), { token: await signToken(k1, { sub: 'rot' }) }), 401, 'invalid_token');
    // The session goes on with the new key.
    expectOk(await mcpRequest(gw, listTools(6), { token: fresh, sid }), 'the same session with the new key');
    restoreClock();
  });

  it('a JWKS fetch storm is bounded by the cooldown (unknown kids do not each fetch)', async () => {
    const before = jwks.fetches;
    const unknown = await makeKey('never-published');
    const results = await Promise.all(Array.from({ length: 10 }, async () => (await mcpRequest(gw, initializeBody(), { token: await signToken(unknown) })).status));
    assert.deepEqual(results, Array(10).fill(401));
    assert.ok(jwks.fetches - before <= 2, `${jwks.fetches - before} fetches for 10 unknown-kid tokens inside one cooldown`);
  });
});

// ---------------------------------------------------------------------------------------------------
// The JWKS endpoint failing
// ---------------------------------------------------------------------------------------------------

describe('auth: JWKS endpoint unavailable', () => {
  let jwks: JwksServer;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('outage');
    jwks = await JwksServer.start([key.publicJwk]);
    jwks.failWith = 503;
    gw = await startGateway(gatewayConfig({ jwksUrl: jwks.url, jwksCooldownMs: 0 }));
  });
  after(async () => {
    await gw?.close();
    await jwks?.close();
  });

  it('a valid token is not blamed while the key set cannot be fetched: 503 with Retry-After, not 401 invalid_token', async () => {
    jwks.failWith = 503;
    const r = await mcpRequest(gw, initializeBody(), { token: await signToken(key) });
    assert.equal(r.status, 503, `HTTP ${r.status} ${r.headers.get('www-authenticate')} ${r.text}`);
    assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.doesNotMatch(r.headers.get('www-authenticate') ?? '', /invalid_token/);
    assert.equal(r.json?.jsonrpc, '2.0');
  });

  it('a valid token is refused (never accepted) while the key set cannot be fetched, and accepted once it is back', async () => {
    jwks.failWith = 503;
    const t = await signToken(key);
    const during = await mcpRequest(gw, initializeBody(), { token: t });
    assert.notEqual(during.status, 200);
    assert.ok(jwks.fetches > 0);
    jwks.failWith = undefined;
    expectOk(await mcpRequest(gw, initializeBody(), { token: t }), 'after the outage');
  });
});

// ---------------------------------------------------------------------------------------------------
// Two static keys of one algorithm and tokens without a kid: an issuer rotating keys that names none
// ---------------------------------------------------------------------------------------------------

describe('auth: a token without a kid, two keys of its algorithm (found by a review)', () => {
  let dir: string;
  let keys: TestKey[];
  let gw: RunningGateway;

  before(async () => {
    keys = [await makeKey('old'), await makeKey('new')];
    dir = mkdtempSync(join(tmpdir(), 'swb-auth-rotate-'));
    const files = keys.map((k, i) => {
      const f = join(dir, `key-${i}.pem`);
      writeFileSync(f, k.spki);
      return f;
    });
    gw = await startGateway(gatewayConfig({ keys: files }));
  });
  after(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is verified by whichever key signed it, and refused when neither did', async () => {
    for (const key of keys) expectOk(await mcpRequest(gw, initializeBody(), { token: await signToken(key, { kid: null }) }), `signed by "${key.kid}"`);
    const stranger = await makeKey('stranger');
    expectChallenge(await mcpRequest(gw, initializeBody(), { token: await signToken(stranger, { kid: null }) }), 401, 'invalid_token');
  });
});

// ---------------------------------------------------------------------------------------------------
// Static keys from a PEM file, with HMAC enabled: the public key's bytes never verify an HS token
// ---------------------------------------------------------------------------------------------------

describe('auth: static PEM key with HMAC enabled', () => {
  const SECRET = 'the-configured-hmac-secret-of-at-least-32-chars';
  let dir: string;
  let key: TestKey;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('pem-key');
    dir = mkdtempSync(join(tmpdir(), 'swb-auth-'));
    const pem = join(dir, 'public.pem');
    writeFileSync(pem, key.spki);
    gw = await startGateway(gatewayConfig({ keys: [pem], allowHmac: true, hmacSecret: SECRET, algorithms: ['RS256', 'HS256'] }));
  });
  after(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('accepts RS256 from the PEM key and HS256 with the configured secret', async () => {
    expectOk(await mcpRequest(gw, initializeBody(), { token: await signToken(key, { kid: null }) }), 'RS256');
    expectOk(await mcpRequest(gw, initializeBody(), { token: await signHmac(SECRET) }), 'HS256 with the secret');
  });

  it('refuses HS256 signed with the PEM file bytes or the JWK (RS/HS confusion): 401 invalid_token', async () => {
    for (const secret of [key.spki, key.spki.trim(), JSON.stringify(key.publicJwk), key.publicJwk.n!]) {
      expectChallenge(await mcpRequest(gw, initializeBody(), { token: await signHmac(secret) }), 401, 'invalid_token');
      expectChallenge(await mcpRequest(gw, initializeBody(), { token: await signHmac(secret, { kid: 'pem-key' }) }), 401, 'invalid_token');
    }
  });

  it('refuses an HS384 token with the right secret when only HS256 is allowed', async () => {
    expectChallenge(await mcpRequest(gw, initializeBody(), { token: await signHmac(SECRET, { alg: 'HS384' }) }), 401, 'invalid_token');
  });
});

// ---------------------------------------------------------------------------------------------------
// RFC 9068 strictly: at+jwt only
// ---------------------------------------------------------------------------------------------------

describe('auth: tokenTypes [at+jwt] without untyped tokens (RFC 9068 §4 as written)', () => {
  let key: TestKey;
  let dir: string;
  let gw: RunningGateway;

  before(async () => {
    key = await makeKey('strict-key');
    dir = mkdtempSync(join(tmpdir(), 'swb-auth-'));
    const pem = join(dir, 'public.pem');
    writeFileSync(pem, key.spki);
    gw = await startGateway(gatewayConfig({ keys: [pem], tokenTypes: ['at+jwt'], allowUntypedTokens: false }));
  });
  after(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('accepts at+jwt and application/at+jwt, refuses JWT and a token with no typ: 401 invalid_token', async () => {
    for (const typ of ['at+jwt', 'application/at+jwt']) expectOk(await mcpRequest(gw, initializeBody(), { token: await signToken(key, { kid: null, typ }) }), typ);
    for (const typ of ['JWT', null]) {
      const r = await mcpRequest(gw, initializeBody(), { token: await signToken(key, { kid: null, typ }) });
      expectChallenge(r, 401, 'invalid_token');
      assert.match(JSON.parse(r.text).error.message, /"typ"/, String(typ));
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------------

describe('auth: configuration', () => {
  const base = { upstreams: [fixture], endpoints: [{ path: '/mcp', upstreams: ['fixture'] }] };

  it('refuses auth mode none on a non-loopback host', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com']) {
      assert.throws(() => parseConfig({ ...base, server: { host }, auth: { mode: 'none' } }), /auth\.mode/, host);
      // The default mode is none as well.
      assert.throws(() => parseConfig({ ...base, server: { host } }), /auth\.mode/, host);
    }
    for (const host of ['127.0.0.1', 'localhost', '::1']) assert.doesNotThrow(() => parseConfig({ ...base, server: { host }, auth: { mode: 'none' } }));
  });

  it('refuses jwt without an issuer, keys or tenants, and HS* without allowHmac', () => {
    const jwt = { mode: 'jwt', issuer: ISSUER, jwksUrl: 'https://issuer.test/jwks.json' };
    assert.doesNotThrow(() => parseConfig({ ...base, auth: jwt, tenants: [{ name: 't', endpoints: ['*'] }] }));
    assert.throws(() => parseConfig({ ...base, auth: { ...jwt, issuer: undefined }, tenants: [{ name: 't', endpoints: ['*'] }] }), /auth\.issuer/);
    assert.throws(() => parseConfig({ ...base, auth: { mode: 'jwt', issuer: ISSUER }, tenants: [{ name: 't', endpoints: ['*'] }] }), /jwt needs keys/);
    assert.throws(() => parseConfig({ ...base, auth: jwt }), /tenants/);
    assert.throws(() => parseConfig({ ...base, auth: { ...jwt, algorithms: ['HS256'] }, tenants: [{ name: 't', endpoints: ['*'] }] }), /allowHmac/);
    assert.throws(() => parseConfig({ ...base, auth: { ...jwt, algorithms: ['none'] }, tenants: [{ name: 't', endpoints: ['*'] }] }), /algorithms/);
    assert.throws(() => parseConfig({ ...base, auth: { ...jwt, tokenTypes: [] }, tenants: [{ name: 't', endpoints: ['*'] }] }), /auth\.tokenTypes/);
  });

  it('publishes only URL issuers as authorization servers (RFC 9728), and warns about the others', async () => {
    // mcp-remote and the SDKs parse each authorization server as a URL: a plain name breaks their discovery.
    const metadataOf = async (auth: Record<string, unknown>) => {
      const lines: string[] = [];
      const config = parseConfig({ ...base, auth: { mode: 'jwt', jwksUrl: 'https://issuer.test/jwks.json', ...auth }, tenants: [{ name: 't', endpoints: ['*'] }] });
      const app = await buildApp(config, { logger: createLogger('warn', { write: (l: string) => void lines.push(l) }) });
      try {
        const res = await app.fastify.inject({ url: '/.well-known/oauth-protected-resource/mcp' });
        assert.equal(res.statusCode, 200);
        return { doc: res.json() as Json, warned: lines.filter((l) => /an issuer must be a URL/.test(l)).map((l) => JSON.parse(l).dropped) };
      } finally {
        await app.close();
      }
    };
    const named = await metadataOf({ issuer: 'switchboard-dev' });
    assert.equal('authorization_servers' in named.doc, false, JSON.stringify(named.doc));
    assert.deepEqual(named.warned, [['switchboard-dev']]);
    const url = await metadataOf({ issuer: ISSUER });
    assert.deepEqual(url.doc.authorization_servers, [ISSUER]);
    assert.deepEqual(url.warned, []);
    const listed = await metadataOf({ issuer: 'plain', authorizationServers: ['https://as.test', 'not a url', 'https://as.test/?q=1', 'ftp://as.test'] });
    assert.deepEqual(listed.doc.authorization_servers, ['https://as.test']);
    assert.deepEqual(listed.warned, [['not a url', 'https://as.test/?q=1', 'ftp://as.test']]);
  });
});
