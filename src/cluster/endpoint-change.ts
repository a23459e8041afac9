import { parseChannelObject } from './channel-message.js';

/** A change an upstream announced on one endpoint (see Cluster.publishChange). */
export interface EndpointChange {
  endpoint: string;
  method: string;
  params: Record<string, unknown> | undefined;
  /** The upstream that announced it (a replica before 2026-12-08 names none): a tenant that may see nothing of it hears none of its list_changed. */
  upstream?: string | undefined;
}

/** A change read from the bus, with the replica that published it, or undefined when the text is not one. */
export function parseEndpointChange(text: string): (EndpointChange & { from: string }) | undefined {
  const c = parseChannelObject(text);
  if (!c) return undefined;
  const params = c.params;
  if (typeof c.endpoint !== 'string' || typeof c.method !== 'string' || typeof c.from !== 'string') return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return undefined;
  const upstream = typeof c.upstream === 'string' ? c.upstream : undefined;
  return { endpoint: c.endpoint, method: c.method, params: params as Record<string, unknown> | undefined, upstream, from: c.from };
}
