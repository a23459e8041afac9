// DELETE /sessions/{id} on one replica of a 2026-07-28 standing another replica holds, while that holder
// is frozen (SIGSTOP: its Redis connections stay open and its heartbeat has not lapsed yet). Such a
// standing has no record in the store: every replica is asked, the frozen one takes the question and never
// answers, and the missing answer was only logged: the operator got 404 "no session", as if it did not
// exist, though GET /sessions had just listed it. It is now answered 504 `replica_timeout` saying which
// replicas did not answer, that one of them may hold it and that it is not known to be ended (the question
// waits in the holder's connection: it ends the standing once it runs again), as for a 2025 session.
// Two gateway processes on a redis-server of the test's own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modernPost } from '../helpers/modern-http.js';
import { frozenHolderPair } from '../helpers/frozen-holder.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'admin-token-end-modern-frozen-0123456789';

describe('ending a 2026-07-28 standing whose holder is frozen', { timeout: 120_000 }, () => {
  const pair = frozenHolderPair('fm', TOKEN);
  const { admin } = pair;

  it('answers 504 replica_timeout, not 404; the holder ends it once resumed', async () => {
    const { holder, asker } = pair;
    const call = await modernPost(new URL('/mcp', holder.base), 'tools/call', { name: 'echo', arguments: { message: 'modern' } });
    assert.equal(call.status, 200, JSON.stringify(call.body));
    const row = (await admin(asker, 'GET', '/sessions')).body.items.find((s: any) => s.era === 'modern');
    assert.ok(row, "the asker lists the holder's standing");
    holder.child.kill('SIGSTOP');
    let ended: { status: number; body: any };
    try {
      ended = await admin(asker, 'DELETE', `/sessions/${encodeURIComponent(row.id)}`);
    } finally {
      holder.child.kill('SIGCONT');
    }
    assert.equal(ended.status, 504, JSON.stringify(ended.body));
    assert.equal(ended.body.error.code, 'replica_timeout');
    assert.match(ended.body.error.message, /1 replica did not answer/);
    assert.match(ended.body.error.message, /not known to be ended/);
    await until('the warning in the log', () => /"level":40[^\n]*replica_timeout|replica_timeout[^\n]*"level":40/.test(pair.log()));
    assert.doesNotMatch(pair.log(), /admin API route failed/);
    // The holder, running again, finds the question waiting in its connection and ends the standing.
    await until('the standing no longer listed', async () => !(await admin(asker, 'GET', '/sessions')).body.items.some((s: any) => s.id === row.id));
    assert.equal((await admin(asker, 'DELETE', `/sessions/${encodeURIComponent(row.id)}`)).status, 404);
  });

  it('an id no replica holds is still 404 while every replica answers', async () => {
    const { asker } = pair;
    const res = await admin(asker, 'DELETE', '/sessions/no-such-standing');
    assert.equal(res.status, 404, JSON.stringify(res.body));
  });
});
