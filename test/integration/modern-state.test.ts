// The requestState the gateway seals for an input_required round, attacked from the client side:
// tampered, expired, replayed, presented by another caller, presented on another request. Each is
// refused with -32602 (HTTP 400) and never forwarded: the 2025 stdio fixture journals every message it
// receives (--journal), and the caller's genuine retry still completes afterwards (a refusal neither
// answers the held upstream request nor uses the state up). An abandoned round is cancelled upstream.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { assertStateRefused, inputRound, Journal, modernPost, type ModernAnswer } from '../helpers/modern-http.js';
import { textOf } from '../helpers/sdk.js';
import { ISSUER, PUBLIC_URL, signHmac } from '../helpers/tokens.js';
import { moveClockAhead, restoreClock, until } from '../helpers/wait.js';

const HMAC_SECRET = 'modern-state-test-hmac-secret-of-32+chars';
const ASKS_NAME = { name: 'test_input_required_result_elicitation', arguments: {} };
const ALICE = { action: 'accept', content: { name: 'Alice' } };

/** The stdio fixture, journaling what it receives; one process for every caller (shared, pool of one). */
function journaledFixture(journal: Journal) {
  return { name: 'fx', transport: 'stdio' as const, ...FIXTURE, args: [...FIXTURE.args, '--journal', journal.file], sharing: 'shared' as const, pool: { size: 1 } };
}

/** The upstream's answer to the held elicitation, and nothing else, reached the fixture since `mark`. */
function assertOnlyTheAnswerArrived(journal: Journal, mark: number, answer: Record<string, unknown> = ALICE): void {
  const seen = journal.since(mark);
  assert.equal(seen.length, 1, `exactly one message reached the upstream: ${JSON.stringify(seen)}`);
  assert.equal(seen[0].method, undefined, 'a response, not a request or notification');
  assert.deepEqual(seen[0].result, answer);
}

describe('requestState refusals (auth jwt, two subjects, two tenants)', () => {
  let gw: RunningGateway;
  const journal = new Journal();
  const tokens: Record<string, string> = {};

  before(async () => {
    gw = await startGateway({
      server: { publicUrl: PUBLIC_URL },
      auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], hmacSecret: HMAC_SECRET, allowHmac: true, algorithms: ['HS256'] },
      tenants: [
        { name: 'acme', endpoints: ['/mcp'] },
        { name: 'globex', endpoints: ['/mcp'] },
      ],
      upstreams: [journaledFixture(journal)],
      endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
    });
    tokens.alice = await signHmac(HMAC_SECRET, { sub: 'alice', tenant: 'acme', expIn: 3600 });
    tokens.bob = await signHmac(HMAC_SECRET, { sub: 'bob', tenant: 'acme', expIn: 3600 });
    tokens.aliceAtGlobex = await signHmac(HMAC_SECRET, { sub: 'alice', tenant: 'globex', expIn: 3600 });
  });
  after(() => gw.close());

  const post = (token: string, method: string, params: Record<string, unknown>): Promise<ModernAnswer> => modernPost(gw.url(), method, params, { token });
  /** Alice's first call: the fixture asks her name, the call is held upstream. */
  const begin = async (params: Record<string, unknown> = ASKS_NAME) => inputRound(await post(tokens.alice!, 'tools/call', params));
  /** Alice's genuine retry completes the held call. */
  const finish = async (round: { key: string; state: string }, params: Record<string, unknown> = ASKS_NAME, answer: Record<string, unknown> = ALICE) => {
    const done = await post(tokens.alice!, 'tools/call', { ...params, inputResponses: { [round.key]: answer }, requestState: round.state });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result.resultType, 'complete');
    return done;
  };

  it('a tampered state is refused and not forwarded; the genuine one still completes', async () => {
    const round = await begin();
    assert.equal(round.key, 'user_name');
    const mark = journal.mark();
    const [version, kid, iv, body, tag] = round.state.split('.') as [string, string, string, string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const forged = [
      [version, kid, iv, flip(body, Math.floor(body.length / 2)), tag].join('.'), // a changed ciphertext byte
      [version, kid, flip(iv, 0), body, tag].join('.'), // another nonce
      [version, kid, iv, body, flip(tag, 0)].join('.'), // another tag
      `${round.state}-TAMPERED`, // the conformance suite's tampering
      round.state.slice(0, -4), // truncated
      'not-a-state',
    ];
    for (const state of forged) {
      const r = await post(tokens.alice!, 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: state });
      assertStateRefused(r, /^(tampered|malformed)$/);
    }
    assert.equal(textOf((await finish(round)).body.result), 'Hello, Alice!');
    assertOnlyTheAnswerArrived(journal, mark);
  });

  it("another caller's state is refused: another subject, or the same subject in another tenant", async () => {
    const round = await begin();
    const mark = journal.mark();
    for (const thief of [tokens.bob!, tokens.aliceAtGlobex!]) {
      const r = await post(thief, 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: { action: 'accept', content: { name: 'Mallory' } } }, requestState: round.state });
      assertStateRefused(r, 'wrong-principal');
    }
    const done = await finish(round);
    assert.equal(textOf(done.body.result), 'Hello, Alice!', "the thief's answer never reached the upstream");
    assertOnlyTheAnswerArrived(journal, mark);
  });

  it('a state presented on another tool or other arguments is refused', async () => {
    const params = { name: 'test_elicitation', arguments: { message: 'first' } };
    const round = await begin(params);
    const mark = journal.mark();
    const elsewhere = [
      { ...params, arguments: { message: 'second' } }, // same tool, other arguments
      ASKS_NAME, // another tool
      { name: 'test_elicitation', arguments: { message: 'first', extra: true } }, // an added argument
    ];
    for (const other of elsewhere) {
      const r = await post(tokens.alice!, 'tools/call', { ...other, inputResponses: { [round.key]: ALICE }, requestState: round.state });
      assertStateRefused(r, 'wrong-request');
    }
    const prompt = await post(tokens.alice!, 'prompts/get', { name: 'test_input_required_result_prompt', inputResponses: {}, requestState: round.state });
    assertStateRefused(prompt, 'wrong-request');
    // test_elicitation asks for a username and an email (both required).
    const answer = { action: 'accept', content: { username: 'alice', email: 'alice@example.com' } };
    const done = await finish(round, params, answer);
    assert.match(textOf(done.body.result), /action=accept/);
    assertOnlyTheAnswerArrived(journal, mark, answer);
  });

  it('a replayed state is refused and nothing reaches the upstream', async () => {
    const round = await begin();
    await finish(round);
    const mark = journal.mark();
    for (const token of [tokens.alice!, tokens.alice!]) {
      const r = await post(token, 'tools/call', { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state });
      assertStateRefused(r, 'replayed');
    }
    // A fence: the next request the upstream sees is this one, so nothing came from the replays before it.
    const fence = await post(tokens.alice!, 'tools/call', { name: 'test_simple_text', arguments: {} });
    assert.equal(fence.status, 200);
    const seen = journal.since(mark);
    assert.deepEqual(
      seen.map((m) => [m.method, m.params?.name]),
      [['tools/call', 'test_simple_text']],
      JSON.stringify(seen),
    );
  });
});

describe('requestState expiry (modern.continuationTtlMs: 1000)', () => {
  let gw: RunningGateway;
  const journal = new Journal();

  before(async () => {
    gw = await startGateway({ modern: { continuationTtlMs: 1000 }, upstreams: [journaledFixture(journal)], endpoints: [{ path: '/mcp', upstreams: ['fx'] }] });
  });
  after(async () => {
    restoreClock();
    await gw.close();
  });

  const post = (params: Record<string, unknown>) => modernPost(gw.url(), 'tools/call', params);

  it('an expired state is refused unforwarded; at its expiry the held upstream call is cancelled', async () => {
    const before = journal.mark();
    const round = inputRound(await post(ASKS_NAME));
    const held = journal.since(before).find((m) => m.method === 'tools/call' && m.params?.name === ASKS_NAME.name);
    assert.ok(held, 'the call reached the upstream');
    assert.equal(gw.app.gateway.modern.held, 1);
    const mark = journal.mark();
    const retry = { ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state };

    // Past the state's expiry on the wall clock (the held call's own timer has not fired yet).
    moveClockAhead(1500);
    try {
      assertStateRefused(await post(retry), 'expired');
    } finally {
      restoreClock();
    }
    assert.deepEqual(journal.since(mark), [], 'the refused retry reached nothing upstream');
    assert.equal(gw.app.gateway.modern.held, 1, 'the call is still held until its own expiry');

    // Nobody retried within the TTL: the gateway cancels the upstream call, and its pending question
    // (the elicitation) is answered with an error, never with the client's content.
    const settled = () => journal.since(mark).filter((m) => m.method === 'notifications/cancelled' || m.error !== undefined);
    await until('notifications/cancelled for the held call, and an error for its question', () => settled().length === 2, 5000);
    const seen = journal.since(mark);
    assert.deepEqual(seen, settled(), JSON.stringify(seen));
    assert.equal(seen.find((m) => m.method === 'notifications/cancelled')?.params.requestId, held.id);
    assert.equal(seen.find((m) => m.error)?.error.code, -32603);
    assert.equal(gw.app.gateway.modern.held, 0, 'the continuation is forgotten');
    assertStateRefused(await post(retry), 'expired');

    // Even a state that still passed its own checks (this replica's clock set back) continues nothing now.
    moveClockAhead(-5000);
    try {
      const gone = await post(retry);
      assertStateRefused(gone, 'gone');
      assert.match(gone.body.error.message, /cannot be continued/);
    } finally {
      restoreClock();
    }
    assert.deepEqual(journal.since(mark), seen, 'nothing more reached the upstream: no answer to the elicitation, ever');
  });

  it('a retry within the TTL completes as usual; answered requests are not kept', async () => {
    const round = inputRound(await post(ASKS_NAME));
    assert.equal(gw.app.gateway.modern.held, 1);
    const done = await post({ ...ASKS_NAME, inputResponses: { [round.key]: ALICE }, requestState: round.state });
    assert.equal(textOf(done.body.result), 'Hello, Alice!');
    for (let i = 0; i < 3; i++) assert.equal((await post({ name: 'test_simple_text', arguments: {} })).status, 200);
    assert.equal(gw.app.gateway.modern.held, 0, 'nothing held once every request is answered');
  });
});
