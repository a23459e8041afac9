/** Every MCP revision the method table knows, oldest first. */
export const PROTOCOL_REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export type ProtocolRevision = (typeof PROTOCOL_REVISIONS)[number];

/**
 * The session-era revisions the gateway speaks, to its clients and to its upstreams alike, newest first
 * (the stateless era's revisions are MODERN_PROTOCOL_VERSIONS). The one list both sides read.
 */
/** The stateless-era revisions the gateway serves (per-request _meta, no session), newest first. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const satisfies readonly ProtocolRevision[];

export const SESSION_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const satisfies readonly ProtocolRevision[];
