/** The 2026-07-28 `_meta` keys (per-request metadata), shared by the client-facing and upstream sides. */
export const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/**
 * The key an input request should have in a 2026-07-28 client's input_required result
 * (`_meta["dev.switchboard/inputKey"]` on the server→client request), used when it is a plain, unused key
 * and never shown to the client. A 2025 upstream may name it, so that clients that know the tool can answer
 * it on a first call; the gateway names it for a 2026-07-28 upstream's input requests: the key that upstream gave.
 */
export const INPUT_KEY_HINT = 'dev.switchboard/inputKey';

/** The log levels (RFC 5424 severities) of logging/setLevel and `_meta` logLevel, least severe first. */
export const LOG_LEVELS: readonly string[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Whether a log message's `level` is below the level a client asked for (`wanted`; none asked: nothing is). */
export function belowLevel(level: unknown, wanted: string | undefined): boolean {
  return wanted !== undefined && LOG_LEVELS.indexOf(String(level)) < LOG_LEVELS.indexOf(wanted);
}

/** A request's or notification's `params._meta` object, if it has one. */
export function metaOf(params: unknown): Record<string, unknown> | undefined {
  const meta = params !== null && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta) ? (meta as Record<string, unknown>) : undefined;
}

/** The protocol version a message's `_meta` names (a modern message), if any. */
export function metaVersion(params: unknown): string | undefined {
  const v = metaOf(params)?.[META_VERSION];
  return typeof v === 'string' ? v : undefined;
}

/** A notification's params without the subscription id a modern upstream tags its listen stream's messages with. */
export function untagged(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta as Record<string, unknown> | undefined;
  if (meta === null || typeof meta !== 'object' || !(META_SUBSCRIPTION_ID in meta)) return params;
  const { [META_SUBSCRIPTION_ID]: _id, ...kept } = meta;
  const { _meta: _old, ...rest } = params!;
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}
