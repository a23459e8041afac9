// A shared upstream's request for a call that has ended (cancelled, timed out) must not be put to another
// session when the transport says which call it is for: on a real Streamable HTTP server the request comes
// on the cancelled call's stream, and is refused (or never read: the stream is let go). On stdio nothing on
// the wire says so, and the one-busy-session guess stands (README: what it can misattribute). Nor must one
// that comes on the stream of the gateway's own request (its catalogue's tools/list), which no session sent.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load.js';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import { createLogger } from '../../../src/observability/logger.js';
import { UpstreamTransports } from '../../../src/upstream/transport-factory.js';
import { UpstreamPool } from '../../../src/upstream/upstream-pool.js';
import { crossingConfig, crossingPool, heard, recordingCaller } from '../../helpers/crossing-upstream.js';
import { until } from '../../helpers/wait.js';

describe('a shared upstream asks for a call that has ended', () => {
  it('stdio: with no call of another session ended, the one busy session is still asked', async () => {
    const pool = crossingPool(crossingConfig('shared'));
    await pool.start();
    const A = recordingCaller('A');
    const C = recordingCaller('C');
    try {
      const inst = pool.instanceFor(A.caller);
      const cancel = new Cancellation();
      // A's own call ended: the upstream's question can only be A's, and A is the one busy here.
      const first = inst.request('tools/call', { name: 'summarize_my_mail', arguments: {} }, { caller: A.caller, callerRequestId: 1, signal: cancel });
      const second = inst.request('tools/call', { name: 'wait', arguments: {} }, { caller: A.caller, callerRequestId: 2 });
      second.catch(() => {});
      await until('both calls reached the upstream', async () => (await heard(pool, C.caller)).filter((m) => m.name === 'summarize_my_mail' || m.name === 'wait').length === 2);
      cancel.abort('stop');
      await assert.rejects(first);
      await until('the upstream got an answer to its sampling request', async () => (await heard(pool, C.caller)).some((m) => m.answer === 'sample-1'));
      assert.equal(A.asked.length, 1);
      assert.equal((await heard(pool, C.caller)).find((m) => m.answer === 'sample-1')!.error, undefined);
    } finally {
      await pool.close();
    }
  });

  it('Streamable HTTP: a request on the stream of a cancelled call is refused, not put to the other session', async () => {
    const up = await startCrossingHttp();
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url: up.url, sharing: 'shared', healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), new UpstreamTransports().create);
    await pool.start();
    const A = recordingCaller('A');
    const B = recordingCaller('B');
    try {
      const inst = pool.instanceFor(A.caller);
      const cancel = new Cancellation();
      const callA = inst.request('tools/call', { name: 'summarize_my_mail', arguments: {} }, { caller: A.caller, callerRequestId: 1, signal: cancel });
      const callB = inst.request('tools/call', { name: 'wait', arguments: {} }, { caller: B.caller, callerRequestId: 7 });
      callB.catch(() => {});
      await until('both calls reached the upstream', () => up.calls === 2);
      cancel.abort('user pressed stop');
      await assert.rejects(callA);
      // The gateway gives up the cancelled call's stream after telling the upstream: the question on it is
      // either read and refused, or never read at all. Either way no other session is asked it.
      await until('the upstream got an answer to its sampling request, or the call\'s stream was let go', () => up.answers.length > 0 || up.released > 0);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(B.asked, [], 'B was never asked A’s question');
      for (const answer of up.answers) assert.ok('error' in answer, 'refused with an error');
    } finally {
      await pool.close();
      await up.close();
    }
  });

  it("Streamable HTTP: a request on the stream of the gateway's own request is refused, not put to the one busy session", async () => {
    const up = await startCrossingHttp();
    const cfg = parseConfig({ upstreams: [{ name: 'u', transport: 'streamable-http', url: up.url, sharing: 'shared', healthCheck: { intervalMs: 0 } }], endpoints: [{ path: '/mcp', upstreams: ['u'] }] }, 'test', {});
    const pool = new UpstreamPool(cfg.upstreams[0]!, createLogger('silent'), new UpstreamTransports().create);
    await pool.start();
    const A = recordingCaller('A');
    try {
      const inst = pool.instanceFor(A.caller);
      const callA = inst.request('tools/call', { name: 'wait', arguments: {} }, { caller: A.caller, callerRequestId: 1 });
      callA.catch(() => {});
      await until('A is busy on the upstream', () => up.calls === 1);
      // No caller: the gateway's own list. The upstream asks on its stream and answers the list once answered.
      up.askOnList = true;
      const listed = await inst.request('tools/list', undefined, {});
      assert.deepEqual(listed.tools, []);
      assert.deepEqual(A.asked, [], 'A was never asked what came with the gateway’s own request');
      const answer = up.answers.find((a) => a.id === 'sample-own');
      assert.ok(answer && 'error' in answer, `refused with an error: ${JSON.stringify(answer)}`);
    } finally {
      await pool.close();
      await up.close();
    }
  });
});

/**
 * A Streamable HTTP upstream written out by hand (an SDK server refuses to ask for a cancelled request
 * itself): each tools/call gets an SSE stream and no answer; when `summarize_my_mail` is cancelled, the
 * server asks sampling/createMessage on that call's stream, as one that sent it before the cancel arrived.
 * With `askOnList`, a tools/list gets a stream that asks sampling/createMessage (`sample-own`) and lists
 * nothing once that is answered.
 */
async function startCrossingHttp() {
  const state = { calls: 0, released: 0, answers: [] as Array<Record<string, unknown>>, askOnList: false };
  const streams = new Map<number, http.ServerResponse>();
  let list: { id: number | string; res: http.ServerResponse } | undefined;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { id?: number | string; method?: string; params?: Record<string, any> };
      const headers = { 'mcp-session-id': 'one' };
      if (m.method === 'initialize') {
        const result = { protocolVersion: m.params!.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'crossing-http', version: '1' } };
        return void res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
      }
      if (m.method === undefined) state.answers.push(m as Record<string, unknown>);
      if (m.method === undefined && m.id === 'sample-own' && list) list.res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: list.id, result: { tools: [] } })}\n\n`);
      if (m.method === 'tools/list' && state.askOnList) {
        list = { id: m.id!, res };
        const ask = { jsonrpc: '2.0', id: 'sample-own', method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'whose?' } }], maxTokens: 10 } };
        res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' }).write(`event: message\ndata: ${JSON.stringify(ask)}\n\n`);
        return;
      }
      if (m.method === 'notifications/cancelled') {
        const stream = streams.get(m.params!.requestId);
        const ask = { jsonrpc: '2.0', id: 'sample-1', method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: "A's private mail" } }], maxTokens: 10 } };
        stream?.write(`event: message\ndata: ${JSON.stringify(ask)}\n\n`);
      }
      if (m.method !== 'tools/call') return void res.writeHead(202, headers).end();
      state.calls++;
      res.writeHead(200, { ...headers, 'content-type': 'text/event-stream' }).flushHeaders();
      if (m.params!.name === 'summarize_my_mail') {
        streams.set(m.id as number, res);
        res.on('close', () => state.released++);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  });
}
