// What the requestsPerSecond suites stand on: a real gateway on a real port in front of the catalogue stdio
// server, auth off (the caller is tenant "anonymous", whose limits these are), and a 2025-03-26 session opened
// on it. The bucket refills at one token per 100 s, so nothing refills while a test runs.
import assert from 'node:assert/strict';
import { startGateway, type RunningGateway } from './gateway.js';
import { initializeBody, post, type Json } from './http-edge.js';

const catalogue = { name: 'cat', transport: 'stdio' as const, command: process.execPath, args: ['test/fixtures/catalogue-server.mjs', '--set', 'files'], sandbox: 'none' as const, sharing: 'shared' as const };

/** A batch of `n` tools/list requests, ids prefixed by `tag`. */
export function toolsListBatch(tag: string, n: number): Json[] {
  return Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: `${tag}-${i}`, method: 'tools/list' }));
}

/**
 * The gateway, tenant "anonymous" limited to `burst` requests at once, and its session `sid`: initialize took
 * one token of the burst, notifications/initialized none.
 */
export async function openRateLimitedSession(burst: number): Promise<{ gw: RunningGateway; sid: string }> {
  const gw = await startGateway({
    upstreams: [catalogue],
    endpoints: [{ path: '/mcp', upstreams: ['cat'] }],
    tenants: [{ name: 'anonymous', endpoints: ['*'], limits: { requestsPerSecond: 0.01, burst } }],
  });
  try {
    const init = await post(gw, initializeBody('2025-03-26'));
    assert.equal(init.status, 200, await init.text());
    const sid = init.headers.get('mcp-session-id')!;
    assert.equal((await post(gw, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid })).status, 202);
    return { gw, sid };
  } catch (err) {
    await gw.close();
    throw err;
  }
}
