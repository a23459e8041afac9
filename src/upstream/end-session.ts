import { request, type Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import type { BearerSource } from './bearer-source.js';
import { upstreamHeaders } from './http-headers.js';
import { discard } from './read-body.js';

/**
 * Best effort, never throws: tells a Streamable HTTP upstream that the gateway's session with it is over
 * (DELETE with its id). Resolves once the request is on its way, not when it is answered.
 */
export async function endSession(cfg: RemoteUpstreamConfig, dispatcher: Dispatcher, credentials: BearerSource | undefined, sessionId: string, protocolVersion: string | undefined): Promise<void> {
  request(cfg.url, {
    method: 'DELETE',
    headers: await upstreamHeaders(cfg.headers, credentials, { 'mcp-session-id': sessionId, ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}) }).catch(() => ({})),
    dispatcher,
    headersTimeout: 2000,
  })
    .then((r) => discard(r.body, cfg.http.bodyTimeoutMs))
    .catch(() => {});
}
