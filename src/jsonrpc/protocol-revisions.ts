/** Every MCP revision the method table knows, oldest first. */
export const PROTOCOL_REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type ProtocolRevision = (typeof PROTOCOL_REVISIONS)[number];

/**
 * The session-era revisions the gateway speaks, to its clients and to its upstreams alike, newest first
 * (2026-07-28, the stateless era, is not served yet). The one list both sides read.
 */
export const SESSION_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const satisfies readonly ProtocolRevision[];
