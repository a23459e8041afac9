// The 2025 era's long-lived streams are authorized once, by the token their GET carried: like a 2026-07-28
// subscriptions/listen stream (modern-listen-token-expiry.test.ts), they must not outlive it. Before 2026-12-07
// the Streamable HTTP standalone GET stream and the legacy HTTP+SSE stream, opened with a token about to
// expire, went on delivering notifications and server→client requests for as long as their connection held,
// though every request with that token was refused 401 ("sessions are not authentication"). Now each ends
// at its token's expiry (plus auth.clockToleranceSec): the Streamable HTTP session stays (the client opens
// the GET again with a fresh token), the legacy session, which lives on its stream, ends with it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../helpers/gateway.js';
import { startHmacGateway } from '../helpers/hmac-gateway.js';
import { mcpRequest, openSession, signHmac } from '../helpers/tokens.js';
import { until } from '../helpers/wait.js';

const SECRET = 'get-stream-token-expiry-hmac-secret-32+';

/** A GET stream read as it comes: its text so far, and whether the gateway ended it. */
async function openGet(url: string, token: string, headers: Record<string, string> = {}): Promise<{ status: number; text: () => string; ended: () => boolean; close: () => void }> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...headers }, signal: ac.signal });
  let text = '';
  let ended = false;
  if (res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // aborted by close(), or the connection cut
      }
      ended = true;
    })();
  } else ended = true;
  return { status: res.status, text: () => text, ended: () => ended, close: () => ac.abort() };
}

describe('a 2025-era GET stream whose token expires', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  before(async () => {
    gw = await startHmacGateway(SECRET);
  });
  after(() => gw.close());

  it('Streamable HTTP: the standalone stream ends, the session stays and takes a GET with a fresh token', async () => {
    const fresh = await signHmac(SECRET, { expIn: 300 });
    const sid = await openSession(gw, fresh);
    const get = await openGet(gw.url('/mcp').toString(), await signHmac(SECRET, { expIn: 3 }), { 'mcp-session-id': sid });
    try {
      assert.equal(get.status, 200);
      // Bounded by the wait: before, the stream stayed open for as long as its connection held.
      await until('the standalone stream to end at its token expiry', get.ended, 20_000);
    } finally {
      get.close();
    }
    const again = await openGet(gw.url('/mcp').toString(), fresh, { 'mcp-session-id': sid });
    try {
      assert.equal(again.status, 200, 'the session outlived its stream');
      const ping = await mcpRequest(gw, { jsonrpc: '2.0', id: 2, method: 'ping' }, { token: fresh, sid });
      assert.equal(ping.status, 200, ping.text);
      assert.deepEqual(ping.json?.result, {}, ping.text);
      assert.ok(!again.ended(), 'the fresh stream is open');
    } finally {
      again.close();
    }
  });

  it('legacy HTTP+SSE: the stream ends, and its session with it', async () => {
    const get = await openGet(gw.url('/sse').toString(), await signHmac(SECRET, { expIn: 3 }));
    let endpoint: string | undefined;
    try {
      assert.equal(get.status, 200);
      await until('the endpoint event', () => /event: endpoint\ndata: (\S+)/.test(get.text()));
      endpoint = /event: endpoint\ndata: (\S+)/.exec(get.text())![1]!;
      await until('the legacy stream to end at its token expiry', get.ended, 20_000);
    } finally {
      get.close();
    }
    // The session lived on the stream: a fresh token finds none (the client opens a new stream and initializes).
    const fresh = await signHmac(SECRET, { expIn: 300 });
    const post = await fetch(new URL(endpoint, gw.base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${fresh}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(post.status, 404, await post.text());
  });
});
