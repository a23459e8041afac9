// Raw 2025 Streamable HTTP requests (fetch, no SDK), for the suites that look at what replicas do with
// them: which replica answers, with which status, forwarded or not.
import assert from 'node:assert/strict';

export const RAW_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
export const RAW_INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };

export interface RawAnswer {
  status: number;
  sid: string | null;
  text: string;
}

/** One POST of `body` to `base`/mcp, with the session id and more headers when given. */
export async function rawPost(base: string, body: object, sid?: string, extra: Record<string, string> = {}): Promise<RawAnswer> {
  const r = await fetch(new URL('/mcp', base), { method: 'POST', headers: { ...RAW_HEADERS, ...(sid ? { 'mcp-session-id': sid } : {}), ...extra }, body: JSON.stringify(body) });
  return { status: r.status, sid: r.headers.get('mcp-session-id'), text: await r.text() };
}

/** A session opened on `base` (initialize + initialized), by id. */
export async function rawSession(base: string): Promise<string> {
  const init = await rawPost(base, RAW_INIT);
  assert.equal(init.status, 200, init.text);
  assert.equal((await rawPost(base, { jsonrpc: '2.0', method: 'notifications/initialized' }, init.sid!)).status, 202);
  return init.sid!;
}
