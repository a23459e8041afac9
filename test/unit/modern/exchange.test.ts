// The exchange's own rules, driven directly: which retry continues it, and what it may ask of a retry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cancellation } from '../../../src/jsonrpc/cancellation.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../../../src/jsonrpc/types.js';
import { Exchange, type AttemptOwner, type AttemptSink, type ExchangeHooks } from '../../../src/modern/exchange.js';
import { readModernRequest, type ModernCall } from '../../../src/modern/modern-request.js';
import { until } from '../../helpers/wait.js';

const VERSION = '2026-07-28';
const principal = { issuer: 'i', subject: 's', tenant: 't', scopes: new Set<string>() };

function call(id: string, capabilities: Record<string, unknown>): ModernCall {
  const headers = { 'mcp-protocol-version': VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'ask' };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': capabilities };
  return readModernRequest(headers, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta } });
}

class Sink implements AttemptSink {
  readonly id: string;
  readonly call: ModernCall;
  owner: AttemptOwner | undefined;
  answer: { response: JsonRpcResponse; status: number } | undefined;
  #closed = false;

  constructor(c: ModernCall) {
    this.id = String(c.id);
    this.call = c;
  }

  get open(): boolean {
    return !this.#closed && this.answer === undefined;
  }

  notify(_m: JsonRpcMessage): void {}

  finish(response: JsonRpcResponse, status = 200): void {
    if (this.open) this.answer = { response, status };
  }

  /** The client's socket closed: as ModernReply, the owner hears it unless the answer is out. */
  close(): void {
    this.#closed = true;
    if (this.answer === undefined) this.owner?.detach(this);
  }
}

function exchange(first: ModernCall): { x: Exchange; ended: string[]; states: string[] } {
  const ended: string[] = [];
  const states: string[] = [];
  const hooks: ExchangeHooks = {
    seal: (x) => {
      const id = `state-${states.length + 1}`;
      states.push(id);
      x.sealedState(id);
      return id;
    },
    shape: (_c, response) => response,
    ended: (_x, reason) => ended.push(reason),
    rerun: () => {},
    ttlMs: 60_000,
  };
  return { x: new Exchange('t-', 1, first, principal, hooks), ended, states };
}

function attach(x: Exchange, c: ModernCall, answers?: Record<string, unknown>): Sink {
  const sink = new Sink(c);
  sink.owner = x;
  x.attach(sink, answers);
  return sink;
}

const ELICIT = { elicitation: { form: {} } };

describe('Exchange', () => {
  it("accepts only its current round's state, once: an earlier round's or a used one is refused", async () => {
    const first = call('1', ELICIT);
    const { x, states } = exchange(first);
    const sink = attach(x, first);
    void x.ask('elicitation/create', { message: 'one?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()).catch(() => {});
    await until('round 1 out', () => sink.answer !== undefined, 2000);
    assert.equal(states.length, 1);
    assert.equal(x.takeState('state-0'), false, 'a state it never sealed');
    assert.equal(x.takeState(states[0]!), true);
    assert.equal(x.takeState(states[0]!), false, 'the same state a second time (a replay the record forgot)');
    const retry = attach(x, call('2', ELICIT), { 'elicitation-1': { action: 'accept', content: {} } });
    void x.ask('elicitation/create', { message: 'two?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()).catch(() => {});
    await until('round 2 out', () => retry.answer !== undefined, 2000);
    assert.equal(x.takeState(states[0]!), false, "round 1's state on round 2");
    assert.equal(x.takeState(states[1]!), true);
  });

  it('a question asked while the call waits for its retry is checked against what that retry declares: one declaring fewer gets 400 -32021, and the call ends', async () => {
    const first = call('1', ELICIT);
    const { x, ended } = exchange(first);
    const sink = attach(x, first);
    void x.ask('elicitation/create', { message: 'one?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()).catch(() => {});
    await until('round 1 out', () => sink.answer !== undefined, 2000);
    // The upstream asks for more while no attempt is here: the first request declared elicitation.
    const asked = x.ask('elicitation/create', { message: 'two?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation());
    asked.catch(() => {});
    // The retry answers round 1 but declares no elicitation: it cannot be asked the second question.
    const retry = attach(x, call('2', {}), { 'elicitation-1': { action: 'accept', content: {} } });
    await until('the retry answered', () => retry.answer !== undefined, 2000);
    assert.equal(retry.answer!.status, 400, JSON.stringify(retry.answer));
    const error = (retry.answer!.response as { error: { code: number; data: unknown } }).error;
    assert.equal(error.code, -32021);
    assert.deepEqual(error.data, { requiredCapabilities: { elicitation: { form: {} } } });
    await assert.rejects(asked);
    assert.equal(x.over, true);
    assert.equal(ended.length, 1);
  });

  it('a question asked while the call waits is put to a retry that declares what it needs, though the first request did not', async () => {
    const first = call('1', ELICIT);
    const { x } = exchange(first);
    const sink = attach(x, first);
    void x.ask('elicitation/create', { message: 'one?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()).catch(() => {});
    await until('round 1 out', () => sink.answer !== undefined, 2000);
    // Sampling, which the first request did not declare: held for the retry, not refused for the first's sake.
    const asked = x.ask('sampling/createMessage', { messages: [], maxTokens: 1 }, new Cancellation());
    asked.catch(() => {});
    const retry = attach(x, call('2', { ...ELICIT, sampling: {} }), { 'elicitation-1': { action: 'accept', content: {} } });
    await until('round 2 out', () => retry.answer !== undefined, 2000);
    assert.equal(retry.answer!.status, 200, JSON.stringify(retry.answer));
    const result = (retry.answer!.response as unknown as { result: { resultType: string; inputRequests: Record<string, { method: string }> } }).result;
    assert.equal(result.resultType, 'input_required');
    assert.deepEqual(Object.values(result.inputRequests).map((r) => r.method), ['sampling/createMessage']);
    assert.equal(x.over, false);
  });

  it("the upstream's answer while one of its questions is still gathered into a round: the question is refused at once, not left to the upstream's timeout", async () => {
    const first = call('1', ELICIT);
    const { x } = exchange(first);
    const sink = attach(x, first);
    let refused: unknown;
    x.ask('elicitation/create', { message: 'one?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()).then(() => (refused = 'answered'), (e: unknown) => (refused = e));
    x.settle({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await until('the question is refused', () => refused !== undefined, 2000);
    assert.equal((refused as { code: number }).code, -32603, String(refused));
    assert.equal(sink.answer!.status, 200);
    assert.ok('result' in sink.answer!.response, 'the client gets the answer');
    assert.equal(x.over, true);
  });

  it("the upstream's answer while its round waits for a retry: the held question is refused at once, a later one too, and the retry gets the answer", async () => {
    const first = call('1', ELICIT);
    const { x } = exchange(first);
    const sink = attach(x, first);
    let refused: unknown;
    x.ask('elicitation/create', { message: 'one?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()).then(() => (refused = 'answered'), (e: unknown) => (refused = e));
    await until('round 1 out', () => sink.answer !== undefined, 2000);
    x.settle({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await until('the held question is refused', () => refused !== undefined, 2000);
    assert.notEqual(refused, 'answered');
    // A question the upstream sends after its own answer (out of order) is refused, not held for a retry.
    await assert.rejects(x.ask('elicitation/create', { message: 'late?', requestedSchema: { type: 'object', properties: {} } }, new Cancellation()));
    const retry = attach(x, call('2', ELICIT), { 'elicitation-1': { action: 'accept', content: {} } });
    assert.ok(retry.answer && 'result' in retry.answer.response, JSON.stringify(retry.answer));
    assert.equal(x.over, true);
  });
});
