import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startRemotePool, startSdkUpstream, testCaller } from '../../helpers/sdk-http-upstream.js';
import { waitFor } from '../../helpers/wait.js';

type Answer = Record<string, unknown>;

// The circuit's half-open trial is one call; a call the upstream answers with a question for a person
// (an elicitation) has shown the upstream answers, and must not keep every other call refused while the
// person takes their time.
describe("the circuit breaker's half-open trial (found by a review)", () => {
  it('is decided when the upstream asks the client something for it: other calls go through while a person answers', async () => {
    let answer!: (a: Answer) => void;
    const person = new Promise<Answer>((r) => (answer = r));
    const asked: string[] = [];
    const caller = {
      id: 's',
      tenant: 't',
      clientRequest: async (method: string) => {
        asked.push(method);
        return person;
      },
      clientNotify: () => {},
    } as never;
    const up = await startSdkUpstream((s) => {
      s.tool('stall', {}, async () => new Promise<never>(() => {}));
      s.tool('quick', {}, async () => ({ content: [{ type: 'text', text: 'quick' }] }));
      s.tool('ask', {}, async (_args, extra) => {
        const r = await extra.sendRequest({ method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } }, ElicitResultSchema);
        return { content: [{ type: 'text', text: `hello ${String(r.content?.name)}` }] };
      });
    });
    // One timeout opens the circuit; a short reset makes it half-open soon after (nothing else calls meanwhile).
    const gw = await startRemotePool(up.url, { requestTimeoutMs: 1500, maxRequestTimeoutMs: 120_000, circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 100 } });
    try {
      const inst = gw.instance;
      await assert.rejects(inst.request('tools/call', { name: 'stall', arguments: {} }, { caller }), (err: { code?: string }) => err.code === 'SWB_UPSTREAM_TIMEOUT');
      assert.ok(await waitFor(() => inst.circuit === 'half-open'), `the circuit is ${inst.circuit}`);
      const trial = inst.request('tools/call', { name: 'ask', arguments: {} }, { caller });
      trial.catch(() => {});
      assert.ok(await waitFor(() => asked.length === 1), 'the upstream never asked the client');
      const meanwhile = await inst.request('tools/call', { name: 'quick', arguments: {} }, { caller }).then(
        (r) => r.content,
        (err: { code?: string }) => err.code,
      );
      assert.deepEqual(meanwhile, [{ type: 'text', text: 'quick' }], 'a call while the trial waits on a person was refused');
      assert.equal(inst.circuit, 'closed');
      answer({ action: 'accept', content: { name: 'Ada' } });
      assert.deepEqual((await trial).content, [{ type: 'text', text: 'hello Ada' }]);
      assert.equal(inst.circuit, 'closed');
    } finally {
      answer({ action: 'cancel' });
      await gw.close();
      up.close();
    }
  });

  it('is decided by a progress notification for it: a long call making progress holds no other call up', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const up = await startSdkUpstream((s) => {
      s.tool('stall', {}, async () => new Promise<never>(() => {}));
      s.tool('quick', {}, async () => ({ content: [{ type: 'text', text: 'quick' }] }));
      s.tool('long', {}, async (_args, extra) => {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: extra._meta!.progressToken!, progress: 1, total: 2 } });
        await gate;
        return { content: [{ type: 'text', text: 'long done' }] };
      });
    });
    const gw = await startRemotePool(up.url, { requestTimeoutMs: 1500, maxRequestTimeoutMs: 120_000, circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 100 } });
    try {
      const inst = gw.instance;
      await assert.rejects(inst.request('tools/call', { name: 'stall', arguments: {} }, { caller: testCaller }), (err: { code?: string }) => err.code === 'SWB_UPSTREAM_TIMEOUT');
      assert.ok(await waitFor(() => inst.circuit === 'half-open'), `the circuit is ${inst.circuit}`);
      let progressed = 0;
      const trial = inst.request('tools/call', { name: 'long', arguments: {}, _meta: { progressToken: 'p1' } }, { caller: testCaller, onProgress: () => void progressed++ });
      trial.catch(() => {});
      assert.ok(await waitFor(() => progressed === 1), 'no progress reached the caller');
      const meanwhile = await inst.request('tools/call', { name: 'quick', arguments: {} }, { caller: testCaller }).then(
        (r) => r.content,
        (err: { code?: string }) => err.code,
      );
      assert.deepEqual(meanwhile, [{ type: 'text', text: 'quick' }], 'a call while the trial makes progress was refused');
      release();
      assert.deepEqual((await trial).content, [{ type: 'text', text: 'long done' }]);
      assert.equal(inst.circuit, 'closed');
    } finally {
      release();
      await gw.close();
      up.close();
    }
  });

  it('stays one call: a call refused while the trial runs does not let a second trial through', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const up = await startSdkUpstream((s) => {
      s.tool('stall', {}, async () => new Promise<never>(() => {}));
      s.tool('quick', {}, async () => ({ content: [{ type: 'text', text: 'quick' }] }));
      s.tool('gated', {}, async () => (await gate, { content: [{ type: 'text', text: 'gated done' }] }));
    });
    const gw = await startRemotePool(up.url, { requestTimeoutMs: 1500, maxRequestTimeoutMs: 120_000, circuitBreaker: { failureThreshold: 1, resetTimeoutMs: 100 } });
    try {
      const inst = gw.instance;
      const outcome = (name: string) => inst.request('tools/call', { name, arguments: {} }, { caller: testCaller }).then((r) => r.content, (err: { code?: string }) => err.code);
      await assert.rejects(inst.request('tools/call', { name: 'stall', arguments: {} }, { caller: testCaller }), (err: { code?: string }) => err.code === 'SWB_UPSTREAM_TIMEOUT');
      assert.ok(await waitFor(() => inst.circuit === 'half-open'), `the circuit is ${inst.circuit}`);
      // The trial: the upstream says nothing about it until the gate opens.
      const trial = outcome('gated');
      assert.equal(await outcome('quick'), 'SWB_CIRCUIT_OPEN', 'a call beside the trial went through');
      assert.equal(await outcome('quick'), 'SWB_CIRCUIT_OPEN', 'after one refused call, a second trial went through beside the first');
      assert.equal(inst.circuit, 'half-open');
      release();
      assert.deepEqual(await trial, [{ type: 'text', text: 'gated done' }]);
      assert.equal(inst.circuit, 'closed');
    } finally {
      release();
      await gw.close();
      up.close();
    }
  });
});
