// ConnectionLimits without sockets: the caps derived from the descriptor limit, readiness after an
// accept failed for want of descriptors, and which connections a burst over the cap closes (a fake server
// emits what node's would, fake sockets record being destroyed).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ConnectionLimits, connectionCaps } from '../../../src/edge/connection-limits.js';
import { until } from '../../helpers/wait.js';

describe('connectionCaps', () => {
  it('derives the caps from the descriptor limit, keeping a reserve', () => {
    assert.deepEqual(connectionCaps({}, 1024), { maxConnections: 768, maxUnauthenticated: 384 });
    assert.deepEqual(connectionCaps({}, 100), { maxConnections: 75, maxUnauthenticated: 37 });
    assert.deepEqual(connectionCaps({}, 1_048_576), { maxConnections: 10_000, maxUnauthenticated: 5_000 });
    assert.deepEqual(connectionCaps({}, undefined), { maxConnections: 10_000, maxUnauthenticated: 5_000 });
  });

  it('configured values win; the unauthenticated cap stays below the total', () => {
    assert.deepEqual(connectionCaps({ maxConnections: 50, maxUnauthenticatedConnections: 10 }, 1024), { maxConnections: 50, maxUnauthenticated: 10 });
    assert.deepEqual(connectionCaps({ maxConnections: 50, maxUnauthenticatedConnections: 80 }, 1024), { maxConnections: 50, maxUnauthenticated: 49 });
  });
});

describe('ConnectionLimits readiness', () => {
  it('is exhausted for 10 s after EMFILE on accept, and counts it', () => {
    let now = 1_000_000;
    const refused: string[] = [];
    const limits = new ConnectionLimits({ maxConnections: 10, maxUnauthenticated: 5, bodyIdleTimeoutMs: 1000, speakGraceMs: 250, onRefused: (r) => refused.push(r), now: () => now });
    const server = new EventEmitter() as unknown as Server;
    limits.attach(server);
    assert.equal(limits.exhausted(), undefined);
    server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' }));
    assert.equal(limits.exhausted(), 'out of file descriptors');
    now += 9_999;
    assert.equal(limits.exhausted(), 'out of file descriptors');
    now += 2;
    assert.equal(limits.exhausted(), undefined);
    server.emit('drop', {});
    assert.deepEqual(refused, ['emfile', 'max_connections']);
    assert.equal(server.maxConnections, 10);
  });
});

/** A socket as ConnectionLimits uses it: 'close' follows destroy() as node's does (a tick later). */
function fakeSocket(): Socket & { destroyed: boolean } {
  const s = new EventEmitter() as unknown as Socket & { destroyed: boolean };
  s.destroyed = false;
  s.destroy = () => {
    s.destroyed = true;
    process.nextTick(() => s.emit('close'));
    return s;
  };
  return s;
}

describe('ConnectionLimits over the unauthenticated cap', () => {
  it('a burst accepted in one loop turn loses none before its sockets are read; then the silent go, oldest first', async () => {
    const refused: string[] = [];
    // The clock moves only when the test says (a loaded host must not end the grace early).
    let now = 1_000_000;
    // Cap 4, ceiling 4 + (10 - 4) / 2 = 7.
    const limits = new ConnectionLimits({ maxConnections: 10, maxUnauthenticated: 4, bodyIdleTimeoutMs: 1000, speakGraceMs: 40, onRefused: (r) => refused.push(r), now: () => now });
    const server = new EventEmitter() as unknown as Server;
    limits.attach(server);
    const sockets = Array.from({ length: 9 }, fakeSocket);
    for (const s of sockets) server.emit('connection', s);
    // Nine in one turn, two over the ceiling: none closed yet (a client among them may have its request in
    // the kernel, read only on the next poll).
    assert.deepEqual(sockets.map((s) => s.destroyed), Array(9).fill(false));
    // The next poll reads the last one's request (before ceiling, cap or grace would have let it go).
    await nextTurn();
    limits.requestArrived(sockets[8]!);
    await nextTurn();
    await nextTurn();
    // A turn has passed for all: over the ceiling (8 idle + 1 in a request = 9 > 7), the two oldest go
    // although still within their grace.
    assert.deepEqual(sockets.map((s) => s.destroyed), [true, true, false, false, false, false, false, false, false]);
    assert.deepEqual(refused, ['unauthenticated', 'unauthenticated']);
    // Once the grace is over, the silent go down to the cap (at the next check, due within the grace);
    // the one in a request stays.
    now += 100;
    await until('the silent ones over the cap to be closed', () => sockets.filter((s) => s.destroyed).length >= 5, 5_000);
    assert.deepEqual(sockets.map((s) => s.destroyed), [true, true, true, true, true, false, false, false, false]);
    assert.deepEqual(limits.counts, { authenticated: 0, unauthenticated: 4 });
  });
});
