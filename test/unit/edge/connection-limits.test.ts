// ConnectionLimits without sockets: the caps derived from the descriptor limit, and readiness after an
// accept failed for want of descriptors (a fake server emits what node's would).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { describe, it } from 'node:test';
import { ConnectionLimits, connectionCaps } from '../../../src/edge/connection-limits.js';

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
