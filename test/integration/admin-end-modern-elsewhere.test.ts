// DELETE /sessions/{id} of a 2026-07-28 standing held by another replica. Such a standing lives on its
// replica alone (no record in the store, unlike a 2025 session), so the replica asked found it neither
// here nor in the store and answered 404, though its own GET /sessions listed it (from the holder's
// answer) and the console offered to end it: an operator behind a port-forward (one pod) could not end
// a client's standing held by another pod. Two gateway processes on a redis-server of the test's own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modernPost } from '../helpers/modern-http.js';
import { adminReplicaPair, type Replica } from '../helpers/replicas.js';

const TOKEN = 'admin-token-end-modern-elsewhere-0123456789';

async function admin(r: Replica, method: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(new URL(path, r.admin), { method, headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: await res.json() };
}

describe("ending another replica's 2026-07-28 standing", { timeout: 120_000 }, () => {
  const pair = adminReplicaPair(TOKEN);

  it("B's DELETE has A end the standing B lists; then nobody lists it, and a second DELETE is 404", async () => {
    const { a, b } = pair;
    const call = await modernPost(new URL('/mcp', a.base), 'tools/call', { name: 'echo', arguments: { message: 'modern' } });
    assert.equal(call.status, 200, JSON.stringify(call.body));
    const modern = (await admin(b, 'GET', '/sessions')).body.items.find((s: any) => s.era === 'modern');
    assert.ok(modern, "B lists A's standing");
    const holder = modern.replica as string;

    const ended = await admin(b, 'DELETE', `/sessions/${encodeURIComponent(modern.id)}`);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.deepEqual(ended.body, { id: modern.id, endedBy: holder, holder });
    const left = (await admin(a, 'GET', '/sessions')).body.items.filter((s: any) => s.id === modern.id);
    assert.deepEqual(left, [], 'A no longer holds it');
    assert.equal((await admin(b, 'DELETE', `/sessions/${encodeURIComponent(modern.id)}`)).status, 404);
  });
});
