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
