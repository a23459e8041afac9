// DELETE /sessions/{id} on one replica of a session another replica holds, while that holder is frozen
// (SIGSTOP: its Redis connections stay open and its heartbeat has not lapsed yet, so it takes the
// message on its admin channel and never answers). The admin API answered 500 "internal" with the
// timer's message and an error-level "route failed" line, as if the gateway were broken. It now
// answers 504 `replica_timeout` naming the holder and saying the session is not known to be ended
// (the holder has the request and acts on it when it runs again), logged as a warning.
// Two gateway processes on a redis-server of the test's own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rawSession } from '../helpers/raw-mcp.js';
import { frozenHolderPair } from '../helpers/frozen-holder.js';
import { until } from '../helpers/wait.js';

const TOKEN = 'admin-token-end-frozen-owner-0123456789';

describe('ending a session whose holder is frozen', { timeout: 120_000 }, () => {
  const pair = frozenHolderPair('fr', TOKEN);
  const { admin } = pair;

  it('answers 504 replica_timeout naming the holder and logs a warning; the holder ends it once resumed', async () => {
    const { holder, asker } = pair;
    const sid = await rawSession(holder.base);
    const row = (await admin(asker, 'GET', '/sessions')).body.items.find((s: any) => s.id === sid);
    assert.ok(row, "the asker lists the holder's session");
    holder.child.kill('SIGSTOP');
    let ended: { status: number; body: any };
    try {
      ended = await admin(asker, 'DELETE', `/sessions/${encodeURIComponent(sid)}`);
    } finally {
      holder.child.kill('SIGCONT');
    }
    assert.equal(ended.status, 504, JSON.stringify(ended.body));
    assert.equal(ended.body.error.code, 'replica_timeout');
    assert.match(ended.body.error.message, new RegExp(`replica ${row.replica}`));
    assert.match(ended.body.error.message, /not known to be ended/);
    await until('the warning in the log', () => /"level":40[^\n]*replica_timeout|replica_timeout[^\n]*"level":40/.test(pair.log()));
    assert.doesNotMatch(pair.log(), /admin API route failed/);
    // The holder, running again, finds the request waiting in its connection and ends the session.
    await until('the session no longer listed', async () => !(await admin(asker, 'GET', '/sessions')).body.items.some((s: any) => s.id === sid));
    assert.equal((await admin(asker, 'DELETE', `/sessions/${encodeURIComponent(sid)}`)).status, 404);
  });
});
