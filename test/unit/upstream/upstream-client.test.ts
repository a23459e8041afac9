import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { GatewayError } from '../../../src/errors.js';
import { JsonRpcError } from '../../../src/jsonrpc/json-rpc-error.js';
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../../../src/jsonrpc/types.js';
import { createLogger } from '../../../src/observability/logger.js';
import { MemoryTransport } from '../../../src/transport/memory-pair.js';
import type { UpstreamCaller } from '../../../src/upstream/upstream-caller.js';
import { GATEWAY_PROTOCOL_VERSION, UpstreamClient, type UpstreamClientHooks } from '../../../src/upstream/upstream-client.js';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';

const logger = createLogger('silent');

/** Lets queued microtasks and one macrotask turn run: the memory pair delivers on microtasks. */
const settle = () => new Promise<void>((r) => setImmediate(r));

type Handler = (req: JsonRpcRequest, up: FakeUpstream) => void;

/** A tiny upstream on the far end of a memory pair: records what it gets, answers via a handler. */
class FakeUpstream {
  readonly received: JsonRpcMessage[] = [];
  handler: Handler | undefined;
  constructor(readonly transport: MemoryTransport) {
    transport.onmessage = (m) => {
      this.received.push(m);
      if ('method' in m && 'id' in m) this.handler?.(m as JsonRpcRequest, this);
    };
  }
  send(m: JsonRpcMessage): void {
    void this.transport.send(m);
  }
  reply(id: RequestId, result: Record<string, unknown>): void {
    this.send({ jsonrpc: '2.0', id, result });
  }
  requests(method?: string): JsonRpcRequest[] {
    return this.received.filter((m): m is JsonRpcRequest => 'method' in m && 'id' in m && (method === undefined || m.method === method));
  }
  notifications(method?: string): Array<{ method: string; params?: Record<string, unknown> }> {
    return this.received.filter((m) => 'method' in m && !('id' in m) && (method === undefined || m.method === method)) as Array<{ method: string; params?: Record<string, unknown> }>;
  }
  responses(): JsonRpcMessage[] {
    return this.received.filter((m) => !('method' in m));
  }
}

const opened: MemoryTransport[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});

function setup(hooks: Partial<UpstreamClientHooks> = {}, name = 'fake') {
  const [gw, up] = MemoryTransport.pair();
  opened.push(gw);
  const upstream = new FakeUpstream(up);
  const notes: Array<[string, Record<string, unknown> | undefined]> = [];
  const client = new UpstreamClient(name, gw, logger, {
    resolveCaller: hooks.resolveCaller ?? (() => undefined),
    onNotification: hooks.onNotification ?? ((method, params) => notes.push([method, params])),
  });
  return { client, upstream, notes, gw };
}

/**
 * `setup`, then initialize, as every connection is before the upstream asks anything: the gateway relays
 * only what it declared there (a dedicated connection is offered roots too).
 */
async function ready(hooks: Partial<UpstreamClientHooks> = {}, dedicated = true) {
  const s = setup(hooks);
  s.upstream.handler = (req, up) => up.reply(req.id, { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '1' } });
  await s.client.initialize(1000, dedicated);
  s.upstream.handler = undefined;
  s.upstream.received.length = 0;
  return s;
}

const OPTS = { timeoutMs: 5000, maxTimeoutMs: 5000 };

function fakeCaller(id: string, impl?: UpstreamCaller['clientRequest']) {
  const calls: Array<{ method: string; params: Record<string, unknown> | undefined; related: RequestId | undefined; signal: Cancellation }> = [];
  const caller: UpstreamCaller = {
    id,
    tenant: 't1',
    clientRequest(method, params, related, signal) {
      calls.push({ method, params, related, signal });
      return impl ? impl(method, params, related, signal) : Promise.resolve({ from: id });
    },
    clientNotify() {},
  };
  return { caller, calls };
}

function gatewayError(code: string, fragment?: string) {
  return (err: unknown) => err instanceof GatewayError && err.code === code && (fragment === undefined || err.message.includes(fragment));
}

describe('UpstreamClient: initialize', () => {
  it('sends initialize, then notifications/initialized after the answer', async () => {
    const { client, upstream } = setup();
    upstream.handler = (req, up) => {
      assert.equal(up.notifications().length, 0, 'initialized must not come before the initialize answer');
      up.reply(req.id, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } });
    };
    const identity = await client.initialize(1000);
    await settle();
    assert.deepEqual(identity, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1' } });
    assert.equal(client.identity, identity);
    assert.equal(upstream.received.length, 2);
    const init = upstream.received[0] as JsonRpcRequest;
    assert.equal(init.method, 'initialize');
    assert.equal(init.params!.protocolVersion, GATEWAY_PROTOCOL_VERSION);
    assert.deepEqual(init.params!.clientInfo, { name: 'switchboard', version: '0.1.0' });
    assert.deepEqual(upstream.received[1], { jsonrpc: '2.0', method: 'notifications/initialized' });
  });

  it('refuses an unsupported protocol version and sends no initialized', async () => {
    const { client, upstream } = setup();
    upstream.handler = (req, up) => up.reply(req.id, { protocolVersion: '1999-01-01', capabilities: {}, serverInfo: { name: 'x', version: '1' } });
    await assert.rejects(client.initialize(1000), gatewayError('SWB_UPSTREAM_PROTOCOL', '"fake"'));
    await settle();
    assert.equal(upstream.notifications('notifications/initialized').length, 0);
  });

  it('refuses an initialize result without capabilities', async () => {
    const { client, upstream } = setup();
    upstream.handler = (req, up) => up.reply(req.id, { protocolVersion: '2025-11-25', serverInfo: { name: 'x', version: '1' } });
    await assert.rejects(client.initialize(1000), gatewayError('SWB_UPSTREAM_PROTOCOL', 'capabilities'));
  });

  it('an initialize error from the upstream rejects with that JsonRpcError', async () => {
    const { client, upstream } = setup();
    upstream.handler = (req, up) => up.send({ jsonrpc: '2.0', id: req.id, error: { code: -32602, message: 'bad version' } });
    await assert.rejects(client.initialize(1000), (err: unknown) => err instanceof JsonRpcError && err.code === -32602 && err.message === 'bad version');
  });
});

describe('UpstreamClient: requests', () => {
  it('rewrites ids: two callers with the same client id get distinct upstream ids and their own answers', async () => {
    const { client, upstream } = setup();
    const held: JsonRpcRequest[] = [];
    upstream.handler = (req) => held.push(req);
    const a = fakeCaller('A').caller;
    const b = fakeCaller('B').caller;
    const pa = client.request('tools/call', { name: 'echo', arguments: { who: 'A' } }, { ...OPTS, caller: a, callerRequestId: 1 });
    const pb = client.request('tools/call', { name: 'echo', arguments: { who: 'B' } }, { ...OPTS, caller: b, callerRequestId: 1 });
    await settle();
    assert.equal(held.length, 2);
    assert.notEqual(held[0]!.id, held[1]!.id);
    assert.equal(typeof held[0]!.id, 'number');
    assert.equal(client.inflight, 2);
    assert.deepEqual(client.activeCallers(), new Map<UpstreamCaller, RequestId | undefined>([[a, 1], [b, 1]]));
    // Answer in reverse order; each caller must get its own answer.
    for (const req of [...held].reverse()) upstream.reply(req.id, { echoed: (req.params!.arguments as { who: string }).who });
    assert.deepEqual(await pa, { echoed: 'A' });
    assert.deepEqual(await pb, { echoed: 'B' });
    assert.equal(client.inflight, 0);
  });

  it('an error response rejects with a JsonRpcError carrying code, message and data', async () => {
    const { client, upstream } = setup();
    upstream.handler = (req, up) => up.send({ jsonrpc: '2.0', id: req.id, error: { code: -32602, message: 'Unknown tool: nope', data: { hint: 1 } } });
    await assert.rejects(
      client.request('tools/call', { name: 'nope' }, OPTS),
      (err: unknown) => err instanceof JsonRpcError && err.code === -32602 && err.message === 'Unknown tool: nope' && (err.data as { hint: number }).hint === 1,
    );
  });

  it('replaces the progress token by the upstream id and maps progress back to the caller\'s token', async () => {
    const { client, upstream } = setup();
    const progress: Array<Record<string, unknown>> = [];
    let upstreamId: RequestId | undefined;
    upstream.handler = (req, up) => {
      upstreamId = req.id;
      const token = (req.params!._meta as { progressToken: unknown }).progressToken;
      up.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'half' } });
      up.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 2, total: 2 } });
      up.reply(req.id, { done: true });
    };
    const params = { name: 'slow', _meta: { progressToken: 'client-token-7', other: 'kept' } };
    const result = await client.request('tools/call', params, { ...OPTS, onProgress: (p) => progress.push(p) });
    assert.deepEqual(result, { done: true });
    const sent = upstream.requests('tools/call')[0]!;
    assert.equal(sent.params!._meta && (sent.params!._meta as Record<string, unknown>).progressToken, upstreamId);
    assert.equal((sent.params!._meta as Record<string, unknown>).other, 'kept');
    assert.deepEqual(progress, [
      { progressToken: 'client-token-7', progress: 1, total: 2, message: 'half' },
      { progressToken: 'client-token-7', progress: 2, total: 2 },
    ]);
    // The caller's params object is not modified.
    assert.deepEqual(params, { name: 'slow', _meta: { progressToken: 'client-token-7', other: 'kept' } });
  });

  it('progress for an unknown token, or for a request sent without a token, is dropped', async () => {
    const { client, upstream, notes } = setup();
    const progress: unknown[] = [];
    upstream.handler = (req, up) => {
      up.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: req.id, progress: 1 } });
      up.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 999, progress: 1 } });
      up.reply(req.id, {});
    };
    await client.request('tools/call', { name: 'x' }, { ...OPTS, onProgress: (p) => progress.push(p) });
    assert.deepEqual(progress, []);
    assert.deepEqual(notes, [], 'progress is never handed to the generic notification hook');
  });

  it('other upstream notifications go to hooks.onNotification', async () => {
    const { upstream, notes } = setup();
    upstream.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    upstream.send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } });
    await settle();
    assert.deepEqual(notes, [
      ['notifications/tools/list_changed', undefined],
      ['notifications/message', { level: 'info', data: 'hi' }],
    ]);
  });

  it('a timeout rejects with SWB_UPSTREAM_TIMEOUT and sends notifications/cancelled with the upstream id', async () => {
    const { client, upstream } = setup();
    upstream.handler = () => {}; // never answers
    await assert.rejects(client.request('tools/call', { name: 'hang' }, { timeoutMs: 20, maxTimeoutMs: 20 }), gatewayError('SWB_UPSTREAM_TIMEOUT', '"fake"'));
    await settle();
    const req = upstream.requests('tools/call')[0]!;
    assert.deepEqual(upstream.notifications('notifications/cancelled'), [
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: req.id, reason: 'timed out at the gateway' } },
    ]);
    assert.equal(client.inflight, 0);
  });

  it('progress resets the timeout, but the overall deadline still holds (mocked clock)', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const { client, upstream } = setup();
      let id: RequestId | undefined;
      upstream.handler = (req) => (id = req.id);
      let outcome = 'pending' as unknown;
      client
        .request('tools/call', { name: 'slow', _meta: { progressToken: 't' } }, { timeoutMs: 60, maxTimeoutMs: 200, onProgress: () => {} })
        .then(
          () => (outcome = 'resolved'),
          (err: unknown) => (outcome = err),
        );
      await settle();
      const progress = async () => {
        upstream.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: id!, progress: 1 } });
        await settle();
      };
      // Progress every 50 ms keeps the 60 ms timeout from firing...
      for (const _ of [50, 100, 150]) {
        mock.timers.tick(50);
        await progress();
        assert.equal(outcome, 'pending');
      }
      mock.timers.tick(49); // t = 199
      await settle();
      assert.equal(outcome, 'pending');
      // ...until the 200 ms deadline.
      mock.timers.tick(1);
      await settle();
      const final = outcome as unknown; // widened again: assert.equal narrowed it to 'pending'
      assert.ok(final instanceof GatewayError && final.code === 'SWB_UPSTREAM_TIMEOUT', String(final));
    } finally {
      mock.timers.reset();
    }
  });

  it('without progress the request times out after exactly timeoutMs (mocked clock)', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const { client, upstream } = setup();
      upstream.handler = () => {};
      let outcome = 'pending' as unknown;
      client.request('tools/call', {}, { timeoutMs: 60, maxTimeoutMs: 200 }).then(
        () => (outcome = 'resolved'),
        (err: unknown) => (outcome = err),
      );
      await settle();
      mock.timers.tick(59);
      await settle();
      assert.equal(outcome, 'pending');
      mock.timers.tick(1);
      await settle();
      const final = outcome as unknown; // widened again: assert.equal narrowed it to 'pending'
      assert.ok(final instanceof GatewayError && final.code === 'SWB_UPSTREAM_TIMEOUT' && final.message.includes('60 ms'), String(final));
    } finally {
      mock.timers.reset();
    }
  });

  it('aborting the signal sends notifications/cancelled with the upstream id and rejects', async () => {
    const { client, upstream } = setup();
    upstream.handler = () => {};
    const ac = new Cancellation();
    const p = client.request('tools/call', { name: 'hang' }, { ...OPTS, signal: ac, callerRequestId: 'client-1' });
    await settle();
    const req = upstream.requests('tools/call')[0]!;
    ac.abort('client went away');
    await assert.rejects(p, gatewayError('SWB_SESSION_CLOSED'));
    await settle();
    assert.deepEqual(upstream.notifications('notifications/cancelled'), [
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: req.id, reason: 'client went away' } },
    ]);
    assert.equal(client.inflight, 0);
  });

  it('an already-aborted signal rejects without sending anything', async () => {
    const { client, upstream } = setup();
    const ac = new Cancellation();
    ac.abort();
    await assert.rejects(client.request('tools/call', {}, { ...OPTS, signal: ac }), gatewayError('SWB_SESSION_CLOSED'));
    await settle();
    assert.equal(upstream.received.length, 0);
  });

  it('a late response after cancellation is ignored, and the next request still works', async () => {
    const { client, upstream } = setup();
    const held: JsonRpcRequest[] = [];
    upstream.handler = (req) => held.push(req);
    const ac = new Cancellation();
    const p1 = client.request('tools/call', { name: 'one' }, { ...OPTS, signal: ac });
    await settle();
    ac.abort('stop');
    await assert.rejects(p1, gatewayError('SWB_SESSION_CLOSED'));
    const p2 = client.request('tools/call', { name: 'two' }, OPTS);
    await settle();
    // The upstream answers the cancelled request late: it must not resolve the second one.
    upstream.reply(held[0]!.id, { late: true });
    await settle();
    assert.equal(client.inflight, 1);
    upstream.reply(held[1]!.id, { second: true });
    assert.deepEqual(await p2, { second: true });
  });

  it('a response with an id the gateway never sent is ignored', async () => {
    const { client, upstream } = setup();
    upstream.handler = () => {};
    const p = client.request('tools/call', {}, OPTS);
    await settle();
    upstream.reply('not-ours', { x: 1 });
    upstream.reply(12345, { x: 2 });
    await settle();
    assert.equal(client.inflight, 1);
    upstream.reply(upstream.requests()[0]!.id, { ok: true });
    assert.deepEqual(await p, { ok: true });
  });

  it('transport close rejects every in-flight request with SWB_UPSTREAM_CRASHED naming the upstream', async () => {
    const { client, upstream } = setup({}, 'github');
    upstream.handler = () => {};
    const p1 = client.request('tools/call', { name: 'a' }, OPTS);
    const p2 = client.request('tools/list', undefined, OPTS);
    await settle();
    await upstream.transport.close();
    const crashed = gatewayError('SWB_UPSTREAM_CRASHED', 'upstream "github"');
    await assert.rejects(p1, crashed);
    await assert.rejects(p2, crashed);
    await assert.rejects(p1, (err: unknown) => err instanceof GatewayError && err.status === 502 && (err.details as { upstream: string }).upstream === 'github');
    assert.equal(client.closed, true);
    assert.equal(client.inflight, 0);
    // Later requests fail the same way without trying to write.
    await assert.rejects(client.request('ping', undefined, OPTS), crashed);
  });
});

describe('UpstreamClient: server→client requests', () => {
  it('answers ping itself without asking for a caller', async () => {
    let asked = 0;
    const { upstream } = setup({ resolveCaller: () => (asked++, undefined) });
    upstream.send({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
    await settle();
    await settle();
    assert.equal(asked, 0);
    assert.deepEqual(upstream.responses(), [{ jsonrpc: '2.0', id: 'p1', result: {} }]);
  });

  it('routes a request through hooks.resolveCaller and answers with the upstream\'s id', async () => {
    const { caller, calls } = fakeCaller('session-1', async () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }));
    let resolvedFor: unknown;
    const { client, upstream } = await ready({
      resolveCaller: (c) => {
        resolvedFor = c;
        return { caller, relatedRequestId: 'client-req-9' };
      },
    });
    upstream.send({ jsonrpc: '2.0', id: 77, method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } });
    await settle();
    await settle();
    assert.equal(resolvedFor, client);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.method, 'sampling/createMessage');
    assert.deepEqual(calls[0]!.params, { messages: [], maxTokens: 5 });
    assert.equal(calls[0]!.related, 'client-req-9');
    assert.deepEqual(upstream.responses(), [{ jsonrpc: '2.0', id: 77, result: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' } }]);
  });

  it('passes the client\'s JSON-RPC error back to the upstream', async () => {
    const { caller } = fakeCaller('s', async () => {
      throw new JsonRpcError(-32601, 'Client does not support sampling');
    });
    const { upstream } = await ready({ resolveCaller: () => ({ caller, relatedRequestId: undefined }) });
    upstream.send({ jsonrpc: '2.0', id: 'u1', method: 'sampling/createMessage', params: {} });
    await settle();
    await settle();
    assert.deepEqual(upstream.responses(), [{ jsonrpc: '2.0', id: 'u1', error: { code: -32601, message: 'Client does not support sampling' } }]);
  });

  it('answers with an error when resolveCaller returns undefined', async () => {
    const { upstream } = await ready({ resolveCaller: () => undefined });
    upstream.send({ jsonrpc: '2.0', id: 5, method: 'elicitation/create', params: {} });
    await settle();
    const res = upstream.responses();
    assert.equal(res.length, 1);
    const r = res[0] as { id: RequestId; error: { code: number; message: string } };
    assert.equal(r.id, 5);
    assert.equal(r.error.code, -32603);
    assert.match(r.error.message, /elicitation\/create/);
  });

  it('the upstream\'s notifications/cancelled aborts the signal given to clientRequest, and no answer is sent', async () => {
    let signal: Cancellation | undefined;
    const { caller } = fakeCaller('s', (_m, _p, _r, sig) => {
      signal = sig;
      return new Promise((_resolve, reject) => sig.onAbort(() => reject(new Error('aborted'))));
    });
    const { upstream } = await ready({ resolveCaller: () => ({ caller, relatedRequestId: undefined }) });
    upstream.send({ jsonrpc: '2.0', id: 'e1', method: 'elicitation/create', params: {} });
    await settle();
    assert.ok(signal);
    assert.equal(signal.aborted, false);
    upstream.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'e1', reason: 'user closed it' } });
    await settle();
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'user closed it');
    await settle();
    assert.deepEqual(upstream.responses(), []);
  });

  it(
    'no answer is sent for a request the upstream cancelled, even when the client still answers it',
    async () => {
      let finish: ((r: Record<string, unknown>) => void) | undefined;
      const { caller } = fakeCaller('s', () => new Promise((resolve) => (finish = resolve)));
      const { upstream } = await ready({ resolveCaller: () => ({ caller, relatedRequestId: undefined }) });
      upstream.send({ jsonrpc: '2.0', id: 'c1', method: 'sampling/createMessage', params: {} });
      await settle();
      upstream.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1' } });
      await settle();
      finish!({ role: 'assistant' });
      await settle();
      assert.deepEqual(upstream.responses(), []);
    },
  );

  it('closing the transport aborts requests the upstream had started', async () => {
    let signal: Cancellation | undefined;
    const { caller } = fakeCaller('s', (_m, _p, _r, sig) => {
      signal = sig;
      return new Promise(() => {});
    });
    const { upstream } = await ready({ resolveCaller: () => ({ caller, relatedRequestId: undefined }) });
    upstream.send({ jsonrpc: '2.0', id: 'r1', method: 'roots/list' });
    await settle();
    await upstream.transport.close();
    assert.equal(signal!.aborted, true);
  });
});
