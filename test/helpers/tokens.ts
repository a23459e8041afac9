// Helpers for the authentication and policy suites: signing keys and tokens (jose), a JWKS server whose
// key set a test changes at runtime, raw HTTP with a bearer token (including duplicate headers), and an
// official SDK client that sends a bearer token, which may change while the session lives.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { FIXTURE, startGateway, type RunningGateway } from './gateway.js';

export const ISSUER = 'https://issuer.test';
/** The gateway's canonical URL in these suites (server.publicUrl) and the accepted token audience. */
export const PUBLIC_URL = 'https://switchboard.test';

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

export interface TestKey {
  kid: string;
  alg: string;
  privateKey: KeyPair['privateKey'];
  /** The public key as a JWK, with kid, alg and use. */
  publicJwk: JWK;
  /** The public key as a PEM SPKI document. */
  spki: string;
}

export async function makeKey(kid: string, alg = 'RS256'): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk, spki: await exportSPKI(publicKey) };
}

export interface TokenOptions {
  sub?: string;
  tenant?: string | undefined;
  scope?: string;
  iss?: string;
  aud?: string | string[];
  /** exp relative to now, in seconds; null: no exp claim. Default 300. */
  expIn?: number | null;
  /** nbf relative to now, in seconds. */
  nbfIn?: number;
  /** Header kid; default the key's kid; null: no kid. */
  kid?: string | null;
  /** Header alg; default the key's alg. */
  alg?: string;
  /** Extra or overriding claims. */
  claims?: Record<string, unknown>;
  /** Leave out the sub claim. */
  noSub?: boolean;
  /** Header typ; default "JWT"; null: no typ. */
  typ?: string | null;
}

const nowSec = () => Math.floor(Date.now() / 1000);

function payloadOf(o: TokenOptions): JWTPayload {
  const now = nowSec();
  const p: JWTPayload = { iss: o.iss ?? ISSUER, aud: o.aud ?? PUBLIC_URL, iat: now };
  if (!o.noSub) p.sub = o.sub ?? 'alice';
  const tenant = 'tenant' in o ? o.tenant : 'acme';
  if (tenant !== undefined) p.tenant = tenant;
  if (o.scope !== undefined) p.scope = o.scope;
  const expIn = o.expIn === undefined ? 300 : o.expIn;
  if (expIn !== null) p.exp = now + expIn;
  if (o.nbfIn !== undefined) p.nbf = now + o.nbfIn;
  return { ...p, ...o.claims };
}

/** A token signed with an asymmetric test key. */
export async function signToken(key: TestKey, o: TokenOptions = {}): Promise<string> {
  const kid = o.kid === undefined ? key.kid : o.kid;
  const typ = o.typ === undefined ? 'JWT' : o.typ;
  return new SignJWT(payloadOf(o)).setProtectedHeader({ alg: o.alg ?? key.alg, ...(typ === null ? {} : { typ }), ...(kid === null ? {} : { kid }) }).sign(key.privateKey);
}

/** An HS* token with the given secret bytes (a real secret, or an RS/HS-confusion "secret" such as a public key's PEM). */
export async function signHmac(secret: string | Uint8Array, o: TokenOptions & { alg?: 'HS256' | 'HS384' | 'HS512' } = {}): Promise<string> {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  const kid = o.kid ?? undefined;
  return new SignJWT(payloadOf(o)).setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT', ...(kid ? { kid } : {}) }).sign(bytes);
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/** An unsecured JWT: `{"alg":"none"}`, the payload, and an empty signature. */
export function unsignedToken(o: TokenOptions = {}, header: Record<string, unknown> = { alg: 'none' }): string {
  return `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payloadOf(o)))}.`;
}

/** Replaces a signed token's payload while keeping its header and signature. */
export function swapPayload(token: string, o: TokenOptions): string {
  const [h, , s] = token.split('.');
  return `${h}.${b64url(JSON.stringify(payloadOf(o)))}.${s}`;
}

// ---------------------------------------------------------------------------------------------------
// JWKS server
// ---------------------------------------------------------------------------------------------------

/**
 * A JWKS endpoint on 127.0.0.1 (or `host`: the image suite serves a container, which reaches the host
 * through its bridge) whose key set the test may replace at any time.
 */
export class JwksServer {
  readonly url: string;
  /** How many times the key set was fetched. */
  fetches = 0;
  /** When set, every fetch is answered with this HTTP status and no key set. */
  failWith: number | undefined;
  /** When true, fetches are held unanswered (counted in `held`) until release(). */
  hold = false;
  #held: (() => void)[] = [];
  #keys: JWK[];
  readonly #server: http.Server;

  private constructor(server: http.Server, url: string, keys: JWK[]) {
    this.#server = server;
    this.url = url;
    this.#keys = keys;
  }

  static async start(keys: JWK[], host = '127.0.0.1'): Promise<JwksServer> {
    let self: JwksServer | undefined;
    const server = http.createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/jwks.json' && self) {
        const jwks = self;
        jwks.fetches++;
        if (jwks.hold) return void jwks.#held.push(() => jwks.#answer(res));
        jwks.#answer(res);
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    self = new JwksServer(server, `http://${host}:${port}/jwks.json`, keys);
    return self;
  }

  /** Fetches held unanswered now (see hold). */
  get held(): number {
    return this.#held.length;
  }

  /** Stops holding fetches and answers those held, as failWith and the keys say now. */
  release(): void {
    this.hold = false;
    for (const answer of this.#held.splice(0)) answer();
  }

  #answer(res: http.ServerResponse): void {
    if (this.failWith !== undefined) return void res.writeHead(this.failWith, { 'content-type': 'text/plain' }).end('unavailable');
    res.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'no-store' }).end(JSON.stringify({ keys: this.#keys }));
  }

  setKeys(keys: JWK[]): void {
    this.#keys = keys;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------------
// Raw HTTP
// ---------------------------------------------------------------------------------------------------

export type Json = Record<string, any>;
export const ACCEPT_BOTH = 'application/json, text/event-stream';
export const CLIENT_INFO = { name: 'auth-test', version: '0.0.0' };
export const PROTOCOL = '2025-11-25';

export interface RpcReply {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, or the first JSON-RPC response found in an SSE body; undefined when there is none. */
  json: Json | undefined;
}

/** The JSON-RPC response in a JSON or text/event-stream body. */
export function messageOf(contentType: string, text: string): Json | undefined {
  if (contentType.startsWith('application/json')) return text ? (JSON.parse(text) as Json) : undefined;
  if (contentType.startsWith('text/event-stream')) {
    for (const block of text.split(/\r?\n\r?\n/)) {
      const data = block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (!data) continue;
      const m = JSON.parse(data) as Json;
      if ('id' in m && ('result' in m || 'error' in m)) return m;
    }
  }
  return undefined;
}

export interface PostOptions {
  token?: string | undefined;
  sid?: string;
  path?: string;
  /** Appended to the URL as is, e.g. "?access_token=…". */
  query?: string;
  headers?: Record<string, string>;
  method?: 'POST' | 'GET' | 'DELETE';
}

/** One request to a Streamable HTTP endpoint (POST by default) with an optional bearer token. */
export async function mcpRequest(gw: RunningGateway, body: unknown, o: PostOptions = {}): Promise<RpcReply> {
  const method = o.method ?? 'POST';
  const headers: Record<string, string> = { accept: method === 'GET' ? 'text/event-stream' : ACCEPT_BOTH };
  if (method === 'POST') headers['content-type'] = 'application/json';
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
  if (o.sid !== undefined) headers['mcp-session-id'] = o.sid;
  Object.assign(headers, o.headers);
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    const res = await fetch(`${gw.base}${o.path ?? '/mcp'}${o.query ?? ''}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      signal: ac.signal,
    });
    const ct = res.headers.get('content-type') ?? '';
    if (method === 'GET' && res.status === 200 && ct.startsWith('text/event-stream')) {
      // An open standalone stream: do not wait for its end.
      ac.abort();
      return { status: res.status, headers: res.headers, text: '', json: undefined };
    }
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: messageOf(ct, text) };
  } finally {
    clearTimeout(timer);
  }
}

export function initializeBody(id: number | string = 1): Json {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: CLIENT_INFO } };
}

/** initialize + notifications/initialized; returns the session id. */
export async function openSession(gw: RunningGateway, token: string, path = '/mcp'): Promise<string> {
  const init = await mcpRequest(gw, initializeBody(), { token, path });
  assert.equal(init.status, 200, `initialize: HTTP ${init.status} ${init.text}`);
  assert.ok(init.json?.result, `initialize result: ${init.text}`);
  const sid = init.headers.get('mcp-session-id');
  assert.ok(sid, 'an Mcp-Session-Id');
  const ack = await mcpRequest(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sid, path });
  assert.equal(ack.status, 202, `notifications/initialized: HTTP ${ack.status} ${ack.text}`);
  return sid;
}

export async function deleteSession(gw: RunningGateway, token: string, sid: string, path = '/mcp'): Promise<number> {
  return (await mcpRequest(gw, undefined, { method: 'DELETE', token, sid, path })).status;
}

export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * node:http with headers in raw list form, so a header may be sent twice (fetch and setHeader merge
 * or replace duplicates).
 */
export function rawRequest(gw: RunningGateway, method: string, path: string, headers: Array<[string, string]>, body?: string): Promise<RawReply> {
  const url = new URL(path, gw.base);
  // With headers in list form node:http adds no Host header itself.
  const flat = headers.some(([k]) => k.toLowerCase() === 'host') ? headers.flat() : [['host', url.host], ...headers].flat();
  if (body !== undefined) flat.push('content-length', String(Buffer.byteLength(body)));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: flat, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('raw request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------------
// WWW-Authenticate
// ---------------------------------------------------------------------------------------------------

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses one challenge: `Bearer k="v", k2="v2"` (quoted values; token values too). */
export function parseChallenge(header: string | null | undefined): Challenge {
  assert.ok(header, 'a WWW-Authenticate header');
  const m = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*(.*)$/s.exec(header);
  assert.ok(m, `a challenge: ${header}`);
  const params: Record<string, string> = {};
  const re = /([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))\s*(?:,|$)/g;
  let p: RegExpExecArray | null;
  while ((p = re.exec(m[2]!)) !== null) params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  return { scheme: m[1]!, params };
}

// ---------------------------------------------------------------------------------------------------
// SDK client with a bearer token
// ---------------------------------------------------------------------------------------------------

export type ClientKind = 'streamable-http' | 'sse';

export interface TokenClient {
  client: Client;
  transport: Transport & { sessionId?: string | undefined };
  /** Every JSON-RPC message the client received, as it came off the wire. */
  received: Json[];
  /** The token sent from now on. */
  setToken(token: string): void;
  close(): Promise<void>;
}

/**
 * The official SDK client, with `Authorization: Bearer <token>` on every request it makes (the
 * stream GET and every POST, on both transports), through a fetch wrapper so the token can change.
 */
export async function connectWithToken(gw: Pick<RunningGateway, 'url'>, kind: ClientKind, token: string, opts: { path?: string; name?: string; capabilities?: ClientCapabilities } = {}): Promise<TokenClient> {
  let current = token;
  const authFetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${current}`);
    return fetch(url, { ...init, headers });
  };
  const path = opts.path ?? '/mcp';
  const transport =
    kind === 'streamable-http'
      ? new StreamableHTTPClientTransport(gw.url(path), { fetch: authFetch })
      : new SSEClientTransport(gw.url(path === '/mcp' ? '/sse' : `${path}/sse`), { fetch: authFetch });
  const client = new Client({ name: opts.name ?? 'auth-test', version: '1.0.0' }, { capabilities: opts.capabilities ?? {} });
  const received: Json[] = [];
  await client.connect(transport);
  // Record what arrives before the client parses it (errors keep their exact wire shape here).
  const wire: Transport = transport;
  const onmessage = wire.onmessage;
  wire.onmessage = (m, extra) => {
    received.push(JSON.parse(JSON.stringify(m)) as Json);
    onmessage?.call(wire, m, extra);
  };
  return {
    client,
    transport,
    received,
    setToken: (t) => void (current = t),
    close: () => client.close(),
  };
}

/**
 * A gateway of auth.mode jwt (issuer ISSUER, its key set at `jwksUrl`) with one endpoint (/mcp) on the
 * conformance fixture, open to tenant acme; `server` says its public URL (and origins, …).
 */
export function startJwtFixtureGateway(jwksUrl: string, server: Parameters<typeof startGateway>[0]['server']): Promise<RunningGateway> {
  return startGateway({
    server,
    auth: { mode: 'jwt', issuer: ISSUER, jwksUrl },
    tenants: [{ name: 'acme', endpoints: ['*'] }],
    upstreams: [{ name: 'fixture', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
    endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
  });
}
