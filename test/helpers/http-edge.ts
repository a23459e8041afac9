// Plain-HTTP helpers for the client-facing edge tests: the end-to-end suite (real port, fetch) and the
// fast one (fastify.inject) share them, so both check a refusal in exactly the same way.
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { FIXTURE } from './gateway.js';

export type Json = Record<string, any>;

export const ACCEPT_BOTH = 'application/json, text/event-stream';
export const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const CLIENT_INFO = { name: 'http-edge-test', version: '0.0.0' };

export function fixtureConfig(server: Json = {}, session: Json = {}) {
  return {
    server,
    session,
    upstreams: [{ name: 'fixture', transport: 'stdio' as const, ...FIXTURE, sharing: 'shared' as const }],
    endpoints: [{ path: '/mcp', upstreams: ['fixture'] }],
  };
}

export function initializeBody(protocolVersion: string, id: number | string = 1, capabilities: Json = {}): Json {
  return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities, clientInfo: CLIENT_INFO } };
}

/** What the helpers talk to: a gateway on a real port (global fetch), or one reached through inject. */
export interface EdgeTarget {
  url(path?: string): URL;
  fetch?: (url: URL, init: RequestInit) => Promise<Response>;
}

export interface PostOptions {
  sid?: string;
  /** Sent as MCP-Protocol-Version. */
  version?: string;
  accept?: string | null;
  contentType?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** POST to the Streamable HTTP endpoint. A non-string body is JSON-encoded. */
export function post(gw: EdgeTarget, body: unknown, o: PostOptions = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (o.accept !== null) headers.accept = o.accept ?? ACCEPT_BOTH;
  if (o.contentType !== null) headers['content-type'] = o.contentType ?? 'application/json';
  if (o.sid !== undefined) headers['mcp-session-id'] = o.sid;
  if (o.version !== undefined) headers['mcp-protocol-version'] = o.version;
  Object.assign(headers, o.headers);
  return (gw.fetch ?? fetch)(gw.url('/mcp'), {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: o.signal ?? AbortSignal.timeout(10_000),
  });
}

/**
 * Asserts an HTTP refusal that carries a JSON-RPC error body: the status, the content type, and
 * `{jsonrpc:'2.0', id, error:{code, message}}` (code checked when given; id defaults to null).
 */
export async function expectRpcError(res: Response, status: number, expect: { code?: number; id?: string | number | null } = {}): Promise<Json> {
  const text = await res.text();
  assert.equal(res.status, status, `expected HTTP ${status}, got ${res.status}: ${text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as Json;
  assert.equal(body.jsonrpc, '2.0');
  assert.ok('id' in body, 'the error body has an id member');
  assert.equal(body.id, expect.id === undefined ? null : expect.id);
  assert.equal('result' in body, false);
  assert.equal(typeof body.error, 'object');
  assert.ok(Number.isInteger(body.error.code), 'error.code is an integer');
  if (expect.code !== undefined) assert.equal(body.error.code, expect.code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  return body;
}

export function expectRpcErrorObject(msg: Json, id: string | number | null, code?: number): void {
  assert.equal(msg.jsonrpc, '2.0');
  assert.equal(msg.id, id);
  assert.ok(Number.isInteger(msg.error?.code), `an error response: ${JSON.stringify(msg)}`);
  if (code !== undefined) assert.equal(msg.error.code, code);
  assert.equal(typeof msg.error.message, 'string');
}

export interface Session {
  sid: string;
  version: string;
  initResult: Json;
}

/** initialize + notifications/initialized; returns the session. */
export async function openSession(gw: EdgeTarget, version = '2025-11-25', capabilities: Json = {}): Promise<Session> {
  const res = await post(gw, initializeBody(version, 1, capabilities));
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const sid = res.headers.get('mcp-session-id');
  assert.ok(sid, 'initialize returns Mcp-Session-Id');
  const body = JSON.parse(text) as Json;
  assert.ok(body.result, text);
  const negotiated = body.result.protocolVersion as string;
  const note = await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid, version: negotiated });
  assert.equal(note.status, 202, await note.text());
  return { sid, version: negotiated, initResult: body.result };
}

export interface InjectedGateway extends Required<EdgeTarget> {
  close(): Promise<void>;
}

/**
 * A gateway that never listens: requests go through fastify.inject() (no socket, no port), which is
 * enough for behaviour decided at the edge (status codes, headers, validation). Upstreams start on
 * first use. Only for answers that end: a stream never resolves an inject.
 */
export async function injectGateway(input: Json): Promise<InjectedGateway> {
  const level = process.env.LOG_LEVEL ?? 'silent';
  const config = parseConfig({ metrics: { enabled: false }, ...input, server: { host: '127.0.0.1', port: 0, ...input.server }, logging: { level } });
  const app = await buildApp(config, { logger: createLogger(level) });
  await app.fastify.ready();
  const base = 'http://127.0.0.1:3000';
  return {
    url: (path = '/mcp') => new URL(path, base),
    async fetch(url, init) {
      const headers = new Headers(init.headers);
      // Like fetch and node:http, a Host header always goes out (the edge's DNS-rebinding guard reads it).
      if (!headers.has('host')) headers.set('host', url.host);
      const r = await app.fastify.inject({
        method: (init.method ?? 'GET') as 'GET',
        url: url.pathname + url.search,
        headers: Object.fromEntries(headers),
        payload: init.body as string | undefined,
      });
      const out = new Headers();
      for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : String(v));
      const empty = r.rawPayload.length === 0 || r.statusCode === 204;
      return new Response(empty ? null : r.rawPayload, { status: r.statusCode, headers: out });
    },
    close: () => app.close(),
  };
}
