import { request, type Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import type { BearerSource } from './bearer-source.js';
import { upstreamHeaders } from './http-headers.js';
import { boundedInformational } from './informational-answers.js';
import { discard } from './read-body.js';

/**
 * How long a closing transport waits for its DELETE's token. Waited for at all so that calls in flight
 * keep failing with their own errors (a changed user link's, an expired session's), which land before
 * the close is heard of and fails the rest as "closed"; bounded because the token may hang with its
 * authorization server, and the close, and every call failed by it, hung as long.
 */
const TOKEN_WAIT_MS = 1000;

/**
 * Best effort, never throws: tells a Streamable HTTP upstream that the gateway's session with it is over
 * (DELETE with its id). Resolves once the request is on its way, not when it is answered, or after
 * TOKEN_WAIT_MS: the DELETE then goes whenever its token comes.
 */
export async function endSession(cfg: RemoteUpstreamConfig, dispatcher: Dispatcher, credentials: BearerSource | undefined, sessionId: string, protocolVersion: string | undefined): Promise<void> {
  const sent = upstreamHeaders(cfg.headers, credentials, { 'mcp-session-id': sessionId, ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}) })
    .catch(() => ({}))
    .then((headers) => {
      request(cfg.url, { method: 'DELETE', headers, dispatcher, headersTimeout: 2000, onInfo: boundedInformational })
        .then((r) => discard(r.body, cfg.http.bodyTimeoutMs))
        .catch(() => {});
    });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([sent, new Promise((r) => (timer = setTimeout(r, TOKEN_WAIT_MS)))]);
  clearTimeout(timer);
}
