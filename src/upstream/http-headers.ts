import type { BearerSource } from './bearer-source.js';

/**
 * Headers for every request to a remote upstream: the configured static ones and the gateway's own
 * token. Nothing from the client's request is ever copied here.
 */
export async function upstreamHeaders(
  base: Record<string, string>,
  credentials: BearerSource | undefined,
  extra: Record<string, string>,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = { ...base, ...extra };
  if (credentials) headers.authorization = `Bearer ${await credentials.token()}`;
  return headers;
}

export function headerValue(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}
