// A 2026-07-28 retry answering a call's input_required round writes no audit line when the edge refuses it
// (429 for the rate, 403 for a scope its token lacks): the call waits on and has its one line when it ends
// (rate-limit-retry-audit, scope-retry-audit). A requestState is good for one retry: once one retry used it,
// the same state presented again continues nothing (the service refuses it, "replayed"). Before, such a
// replay still counted as a retry at those refusals, so a caller replaying its own used state, unexpired,
// had each of its rate and scope denials of that call written nowhere. Real gateways on real ports in front
// of the conformance stdio server; one replica with the memory store, and two sharing a real redis-server
// (the state used on one, replayed on the other).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startAuditedGateway } from '../helpers/audited-gateway.js';
import { FIXTURE, startGateway, type RunningGateway } from '../helpers/gateway.js';
import type { Json } from '../helpers/http-edge.js';
import { inputRound, modernPost, type ModernAnswer, type ModernPostOptions } from '../helpers/modern-http.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ISSUER, PUBLIC_URL, makeKey, signToken } from '../helpers/tokens.js';

const ASKS = { name: 'test_elicitation', arguments: { message: 'Who are you?' } };
const ADA = { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };

/** A call that asks, and the retry that answers its round: served (200) on `to`, its state then used. */
async function usedRetry(from: RunningGateway, to: RunningGateway, o: ModernPostOptions = {}): Promise<Record<string, unknown>> {
  const round = inputRound(await modernPost(from.url(), 'tools/call', ASKS, o));
  const retry = { ...ASKS, requestState: round.state, inputResponses: { [round.key]: ADA } };
  let answer: ModernAnswer;
  // Under a rate of one every 5 s the retry may find the bucket empty: sent again until it is served.
  while ((answer = await modernPost(to.url(), 'tools/call', retry, o)).status === 429) await new Promise((r) => setTimeout(r, 250));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.match(JSON.stringify(answer.body.result), /action=accept/);
  return retry;
}

const parsed = (lines: string[]): Json[] => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.audit === true && l.msg === 'audit');

describe('a used requestState presented again, refused for the request rate (one replica)', { timeout: 60_000 }, () => {
  let gw: RunningGateway;
  let audited: () => Json[];

  before(async () => {
    ({ gw, audited } = await startAuditedGateway({ tenant: { limits: { requestsPerSecond: 0.2, burst: 1 } } }));
  });
  after(async () => {
    await gw?.close();
  });

  it('is audited as the denial it is', async () => {
    const retry = await usedRetry(gw, gw);
    const before = audited().length;
    // The retry just took the bucket's one token; should it have refilled, the replay is refused as one (400) and sent again.
    let answer = await modernPost(gw.url(), 'tools/call', retry);
    if (answer.status !== 429) answer = await modernPost(gw.url(), 'tools/call', retry);
    assert.equal(answer.status, 429, JSON.stringify(answer.body));
    const denied = audited().slice(before).filter((l) => l.rule === 'limits.requestsPerSecond');
    assert.equal(denied.length, 1, audited().slice(before).map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(denied[0]!.name, 'test_elicitation');
    assert.equal(denied[0]!.decision, 'deny');
  });
});

describe('a used requestState presented again, refused for a missing scope', { timeout: 90_000 }, () => {
  let dir: string;
  let redis: TestRedis;
  let wide: string;
  let narrow: string;
  const gateways: RunningGateway[] = [];
  const requestStateKey = randomBytes(32).toString('base64url');

  /** A replica (with `redis`, sharing its state and the requestState key) whose audit lines `lines` keeps. */
  const start = async (lines: string[], shared?: TestRedis): Promise<RunningGateway> => {
    const gw = await startGateway(
      {
        server: { publicUrl: PUBLIC_URL },
        ...(shared ? { store: { redis: { url: shared.url, keyPrefix: 'replayaudit:', heartbeatMs: 200, replicaTtlMs: 1000 } } } : {}),
        modern: { requestStateKey },
        audit: { enabled: true },
        auth: { mode: 'jwt', issuer: ISSUER, audience: [PUBLIC_URL], keys: [join(dir, 'key.pem')] },
        tenants: [{ name: 'acme', endpoints: ['/mcp'], tools: { allow: [{ match: 'fx__test_elicitation', scopes: ['ask'] }, 'fx__*'] } }],
        upstreams: [{ name: 'fx', transport: 'stdio', ...FIXTURE, sharing: 'shared' }],
        endpoints: [{ path: '/mcp', upstreams: ['fx'] }],
      },
      { logLines: lines },
    );
    gateways.push(gw);
    return gw;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'swb-replay-audit-'));
    const key = await makeKey('k1');
    writeFileSync(join(dir, 'key.pem'), key.spki);
    wide = await signToken(key, { aud: PUBLIC_URL, kid: null, scope: 'tools:read ask' });
    narrow = await signToken(key, { aud: PUBLIC_URL, kid: null, scope: 'tools:read' });
    redis = await startRedis();
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is audited as the denial it is (one replica, memory store)', async () => {
    const lines: string[] = [];
    const gw = await start(lines);
    const retry = await usedRetry(gw, gw, { token: wide });
    const before = parsed(lines).length;
    const answer = await modernPost(gw.url(), 'tools/call', retry, { token: narrow });
    assert.equal(answer.status, 403, JSON.stringify(answer.body));
    const denied = parsed(lines).slice(before);
    assert.equal(denied.length, 1, denied.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(denied[0]!.decision, 'deny');
    assert.equal(denied[0]!.name, 'test_elicitation');
  });

  it('is audited as the denial it is on a replica that did not hold the call (Redis)', async () => {
    const linesA: string[] = [];
    const linesB: string[] = [];
    const a = await start(linesA, redis);
    const b = await start(linesB, redis);
    // Used on A; replayed on B, which holds nothing of it and learns it was used from the shared store.
    const retry = await usedRetry(a, a, { token: wide });
    const answer = await modernPost(b.url(), 'tools/call', retry, { token: narrow });
    assert.equal(answer.status, 403, JSON.stringify(answer.body));
    const denied = parsed(linesB);
    assert.equal(denied.length, 1, denied.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(denied[0]!.decision, 'deny');
    assert.equal(denied[0]!.name, 'test_elicitation');
  });

  it('an unused one, on a replica that did not hold the call, is still a retry: no line of its own (Redis)', async () => {
    const linesA: string[] = [];
    const linesB: string[] = [];
    const a = await start(linesA, redis);
    const b = await start(linesB, redis);
    const round = inputRound(await modernPost(a.url(), 'tools/call', ASKS, { token: wide }));
    const retry = { ...ASKS, requestState: round.state, inputResponses: { [round.key]: ADA } };
    const refused = await modernPost(b.url(), 'tools/call', retry, { token: narrow });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual(parsed(linesB), [], 'the refused retry wrote no line');
    // Handed to A, which holds the call: it ends there, with its one line.
    const answer = await modernPost(b.url(), 'tools/call', retry, { token: wide });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.match(JSON.stringify(answer.body.result), /action=accept/);
    const lines = parsed(linesA);
    assert.equal(lines.length, 1, lines.map((l) => JSON.stringify(l)).join('\n'));
    assert.equal(lines[0]!.decision, 'allow');
    assert.deepEqual(parsed(linesB), []);
  });
});
