import type { ServerResponse } from 'node:http';
import { Agent, request } from 'undici';
import type { Logger } from '../observability/logger.js';
import { FORWARD_HEADER, type ForwardSignature } from './forward-signature.js';
import { watchSilence } from './silence-watch.js';
import type { IncomingForward } from './tunnel.js';

/** Headers that describe one hop, never passed on (the client's Host, Origin and Authorization are). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'te', 'trailer', 'upgrade', 'proxy-connection', 'proxy-authorization', 'expect', 'http2-settings']);
/** The tunnel's marker: meaningless on the wire, dropped so that no client value rides along. */
const TUNNEL_MARK = 'x-switchboard-forwarded';
/** The longest a forward waits for a connection to the owner: a replica that does not accept is gone or unreachable. */
const CONNECT_TIMEOUT_MS = 3_000;

/**
 * What became of a forward over HTTP. 'relayed': the owner's answer went to the client (or its stream
 * ended early); 'unreached': no connection to the owner (refused, timed out): it certainly did not get
 * the request and nothing was answered; 'lost': the connection broke after the request went out and
 * before an answer (the owner may have run it): nothing was answered; 'silent': no answer, and the
 * owner's heartbeat lapsed meanwhile (see watchSilence).
 */
export type HttpOutcome = 'relayed' | 'unreached' | 'lost' | 'silent';

/**
 * Forwards requests to the replica that owns their session over plain HTTP (undici), and streams the
 * answer back with backpressure: undici's body is piped into the client's response, so a client that
 * does not read stops this replica reading the owner's socket, and the owner's stream fills its own
 * bounded buffer (server.maxStreamBufferBytes) and is cut there. Nothing is held here without bound.
 *
 * One Agent for all owners, keeping connections alive per owner. Connections are not capped per owner:
 * an open SSE stream holds one for its life (HTTP/1.1), so a cap would queue the next stream behind it
 * forever; their number is bounded by this replica's own client connections (server.maxConnections).
 */
export class HttpForward {
  readonly #agent: Agent;
  readonly #me: string;
  readonly #logger: Logger;
  readonly #timeoutMs: number;

  constructor(me: string, timeoutMs: number, logger: Logger) {
    this.#me = me;
    this.#logger = logger;
    // Idle connections go before the owner's server drops them (Fastify keeps them 72 s, Node's default 5 s): a POST
    // sent on a socket the owner just closed would look 'lost' though it never arrived.
    // No headers timeout: an owner slow to start its answer is given up on only when it is silent (watchSilence).
    this.#agent = new Agent({ connect: { timeout: Math.min(timeoutMs, CONNECT_TIMEOUT_MS) }, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Sends `req` to the replica `owner` at `base`, signed; relays the answer on the response `open` gives
   * (called only then). `alive`: whether the owner's heartbeat is current, asked every timeoutMs until its answer ends.
   */
  async send(base: string, owner: string, req: IncomingForward, signature: ForwardSignature, open: () => ServerResponse, alive: () => Promise<boolean>): Promise<HttpOutcome> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v === undefined || HOP_BY_HOP.has(k) || k === TUNNEL_MARK || k === FORWARD_HEADER) continue;
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    const session = req.headers['mcp-session-id'];
    // Signed over the path as it goes on the wire (the URL parser may normalize what the client sent).
    const target = new URL(req.url, base);
    headers[FORWARD_HEADER] = signature.sign(this.#me, owner, { method: req.method, url: target.pathname + target.search, session: typeof session === 'string' ? session : undefined, body: req.body });
    let answer: Awaited<ReturnType<typeof request>>;
    let silent = false;
    const ac = new AbortController();
    const stop = watchSilence(this.#timeoutMs, alive, () => {
      silent = true;
      ac.abort();
    });
    try {
      answer = await request(target, { dispatcher: this.#agent, method: req.method as 'POST', headers, body: req.body, signal: ac.signal });
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      this.#logger.debug({ err: (err as Error).message, code, owner: base }, 'forward over HTTP failed');
      if (silent) return 'silent';
      return UNREACHED.has(code) ? 'unreached' : 'lost';
    } finally {
      stop();
    }
    const res = open();
    // The client may have left while the owner was answering: its 'close' has fired already and never will again.
    if (res.destroyed || !res.socket || res.socket.destroyed) {
      // Destroyed unread, undici's body emits RequestAbortedError: unheard, an uncaught exception.
      answer.body.once('error', () => undefined).destroy();
      return 'relayed';
    }
    res.writeHead(answer.statusCode, withoutFraming(answer.headers));
    res.flushHeaders();
    // pipe(), not pipeline(): the same backpressure, but an owner dying mid-answer ends the client's
    // response cleanly (a stream's client reconnects with Last-Event-ID) instead of resetting it. The
    // client leaving destroys undici's body: the owner sees its connection close (for a Streamable HTTP
    // stream that is not a cancellation).
    const body = answer.body;
    // The owner's heartbeat is still asked while its answer runs: a frozen owner (SIGSTOP, a stalled VM)
    // keeps its connection open and silent, undici's body has no idle timeout (a quiet stream is normal),
    // and the client, its stream open, would never reconnect to the replica that takes the session over.
    const unwatch = watchSilence(this.#timeoutMs, alive, () => body.destroy(new Error('the owner is gone (its heartbeat lapsed)')));
    body.once('close', unwatch);
    res.once('close', () => body.destroy());
    body.once('error', (err) => {
      this.#logger.debug({ err: err.message }, 'forwarded response ended early');
      if (!res.writableEnded) res.end();
    });
    body.pipe(res);
    return 'relayed';
  }

  close(): Promise<void> {
    return this.#agent.destroy();
  }
}

/** Connection failures that prove the request never reached the owner. */
const UNREACHED = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/** A response's headers without those that describe its framing on the other hop. */
function withoutFraming(h: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection' && k !== 'keep-alive') out[k] = v;
  return out;
}
