import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '../../src/session/session-store.js';

/** A fresh, movable 2025-era session record under a new id, as a Cluster stores it. */
export const sessionRecord = (): SessionRecord => ({
  id: randomUUID(),
  kind: 'streamable-http',
  endpoint: '/mcp',
  principal: { issuer: 'i', subject: 's', tenant: 't' },
  protocolVersion: '2025-11-25',
  clientCapabilities: {},
  clientInfo: { name: 'c', version: '1' },
  movable: true,
  createdAt: Date.now(),
});

/** The principal of every request to a gateway with authentication off. */
export const ANONYMOUS = { issuer: 'local', subject: 'anonymous', tenant: 'anonymous' };

/**
 * `record` stored under `prefix` as a session of a replica that is gone (owner "ghost", no heartbeat): the
 * next request naming it is taken over by the replica it reaches. Kept a minute.
 */
export async function plantOrphan(redis: { set(key: string, value: string, px: 'PX', ms: number): Promise<unknown> }, prefix: string, record: SessionRecord): Promise<void> {
  await redis.set(`${prefix}session:${record.id}`, JSON.stringify(record), 'PX', 60_000);
  await redis.set(`${prefix}owner:${record.id}`, 'ghost', 'PX', 60_000);
}
