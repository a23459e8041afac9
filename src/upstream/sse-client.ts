import { request, type Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { parseText, validateMessage } from '../jsonrpc/parse.js';
import { readSse } from '../jsonrpc/read-sse.js';
import { SseParser, type SkippedExcerpt, type SseMessage } from '../jsonrpc/sse-parser.js';
import { answeredId } from '../jsonrpc/answer-id.js';
import { isRequest, type JsonRpcMessage, type RequestId } from '../jsonrpc/types.js';
import type { Logger } from '../observability/logger.js';
import type { MessageExtra, Transport, TransportError } from '../transport/transport.js';
import { discard, readPrefix } from './read-body.js';
import type { BearerSource } from './bearer-source.js';
import { sentBearer, traceHeaders, upstreamHeaders } from './http-headers.js';
import { NoiseLog } from './noise-log.js';
import { upstreamRequest } from './upstream-request.js';
import { boundedInformational } from './informational-answers.js';
import { keepSentCredentials } from './sent-credentials.js';
import { answerTooLarge, httpRefusal, refusedForSession, sessionExpired } from './remote-errors.js';
import { encodedAnswer, foreignEncoding, refusalDetail } from './content-encoding.js';
import { MAX_UNTAKEN_ANSWERS, UNANSWERED_GRACE_MS, UnansweredPosts } from './unanswered-posts.js';
import type { GatewayError } from '../errors.js';
import { withoutDeep } from './deep-messages.js';
import { dispatchersOf, type RemoteDispatchers } from './remote-agents.js';

/**
 * The longest endpoint URL taken (8 KiB, what servers and proxies take in a request line). Before 2026-12-07 an
 * endpoint event of up to http.maxMessageBytes (16 MiB) was taken, and sent as the request line of every POST.
 */
const MAX_ENDPOINT_CHARS = 8192;

/**
 * The gateway as a legacy HTTP+SSE (2024-11-05) client: GET opens the stream, whose `endpoint` event
 * names the URL to POST to. The protocol has no resumption, so a dropped stream closes the transport
 * and the instance reconnects and re-initializes. That one stream carries every answer: one over
 * http.maxMessageBytes is skipped (never held), and only the call it answers fails (see #skipped).
 */
export class SseClientTransport implements Transport {
  readonly #cfg: RemoteUpstreamConfig;
  readonly #http: RemoteDispatchers;
  readonly #credentials: BearerSource | undefined;
  readonly #logger: Logger;
  readonly #noise: NoiseLog;
  readonly #closer = new AbortController();
  #endpoint: string | undefined;
  #closed = false;
  /** The POSTs whose answer has not yet said whether they were taken; and what a send fails with once the session is forgotten. */
  readonly #unanswered = new UnansweredPosts(() => this.#logger.warn({ upstream: this.#cfg.name, max: MAX_UNTAKEN_ANSWERS }, 'upstream asks faster than it takes the answers; answers past the bound are not sent'));
  #unsent: GatewayError | undefined;
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  onanswerlost?: (requestId: RequestId, error: Error) => void;
  onclose?: (reason?: TransportError) => void;
  onerror?: (error: Error) => void;

  /** `dispatcher`: a RemoteAgents, whose streams never take the connections POSTs need; one Dispatcher serves both. */
  constructor(cfg: RemoteUpstreamConfig, dispatcher: Dispatcher | RemoteDispatchers, credentials: BearerSource | undefined, logger: Logger) {
    this.#cfg = cfg;
    this.#http = dispatchersOf(dispatcher);
    this.#credentials = credentials;
    this.#logger = logger;
    this.#noise = new NoiseLog(logger, Date.now, 'SSE event');
  }

  /**
   * Opens the stream and reads up to its endpoint event, all within http.headersTimeoutMs: the headers had that
   * bound and the endpoint event another, so an upstream slow at both held the start for twice the bound.
   */
  async start(): Promise<void> {
    const headers = await upstreamHeaders(this.#cfg.headers, this.#credentials, { accept: 'text/event-stream' });
    const deadline = performance.now() + this.#cfg.http.headersTimeoutMs; // monotonic, as every bound here
    const res = await request(this.#cfg.url, {
      method: 'GET',
      headers,
      dispatcher: this.#http.streams, // open for the link's life: see RemoteDispatchers
      signal: this.#closer.signal,
      headersTimeout: this.#cfg.http.headersTimeoutMs,
      bodyTimeout: 0,
      onInfo: boundedInformational,
    });
    if (res.statusCode !== 200) {
      await discard(res.body, this.#cfg.http.bodyTimeoutMs); // this GET has no body timeout: a stalled refusal must not hang the start
      if (res.statusCode === 401) this.#credentials?.invalidate(sentBearer(headers));
      throw httpRefusal(this.#cfg.name, res, this.#cfg.url, 'opening the SSE stream');
    }
    const coding = foreignEncoding(res.headers); // its events unreadable: said at once, not as "no endpoint event" later
    if (coding !== undefined) throw (res.body.destroy(), encodedAnswer(this.#cfg.name, coding, 'its SSE stream'));
    const events = readSse(res.body, new SseParser(this.#cfg.http.maxMessageBytes, undefined, (_id, data) => this.#skipped(data)));
    const silent = new Error(`upstream "${this.#cfg.name}" sent no endpoint event within http.headersTimeoutMs (${this.#cfg.http.headersTimeoutMs} ms)`);
    const timer = setTimeout(() => res.body.destroy(silent), Math.max(0, deadline - performance.now()));
    try {
      this.#endpoint = await this.#endpointOf(events);
    } finally {
      clearTimeout(timer);
    }
    void this.#pump(events);
  }

  /** Reads up to the `endpoint` event, which names the URL to POST to. */
  async #endpointOf(events: AsyncGenerator<SseMessage, void, undefined>): Promise<string> {
    for (;;) {
      const { value: e, done } = await events.next();
      if (done) throw new Error(`upstream "${this.#cfg.name}" closed its SSE stream`);
      if (e.event === 'message') this.#deliver(e);
      if (e.event !== 'endpoint') continue;
      // Sent on every POST (and named in its refusals): an event may be http.maxMessageBytes long.
      if (e.data.length > MAX_ENDPOINT_CHARS) throw this.#longEndpoint(e.data.length);
      const url = new URL(e.data, this.#cfg.url);
      if (url.href.length > MAX_ENDPOINT_CHARS) throw this.#longEndpoint(url.href.length);
      // A stream that points our POSTs at another origin would leak the gateway's credentials there.
      if (url.origin !== new URL(this.#cfg.url).origin) throw new Error(`upstream "${this.#cfg.name}" named an endpoint on another origin (${url.origin})`);
      return url.href;
    }
  }

  #longEndpoint(chars: number): Error {
    return new Error(`upstream "${this.#cfg.name}" named an endpoint URL of ${chars} characters, over ${MAX_ENDPOINT_CHARS}; not used`);
  }

  /** The rest of the stream; when it ends the transport closes and the instance reconnects. */
  async #pump(events: AsyncGenerator<SseMessage, void, undefined>): Promise<void> {
    try {
      for await (const e of events) if (e.event === 'message') this.#deliver(e);
    } catch (err) {
      if (!this.#closed) this.#logger.debug({ err: (err as Error).message }, 'upstream SSE stream broke');
    }
    void this.close();
  }

  /**
   * An event over http.maxMessageBytes, skipped: read to the error instead, it broke the stream, and every
   * call in flight on the connection (other sessions' too, shared) failed as crashed, the upstream
   * restarted. The call it answers fails alone, with SWB_RESULT_TOO_LARGE, as over Streamable HTTP. Its id
   * unreadable (or not an answer), it is only warned of: a call it answered times out.
   */
  #skipped(data: SkippedExcerpt): void {
    const id = answeredId(data.head, data.tail);
    const max = this.#cfg.http.maxMessageBytes;
    if (id !== undefined && this.onanswerlost) return this.onanswerlost(id, answerTooLarge(this.#cfg.name, max));
    this.#logger.warn({ upstream: this.#cfg.name, maxMessageBytes: max }, 'upstream sent a message over http.maxMessageBytes on its SSE stream, answering no request the gateway could tell; skipped');
  }

  readonly #lostAnswer = (id: RequestId | undefined, err: Error): never => {
    if (id !== undefined) this.onanswerlost?.(id, err);
    throw err;
  };

  #deliver(e: SseMessage): void {
    try {
      // One nested too deep to relay: the call it answers fails now, saying why (it went unanswered), and it is logged.
      const [m] = withoutDeep(e.data, [validateMessage(parseText(e.data))], this.#lostAnswer);
      this.onmessage?.(m!, { bytes: Buffer.byteLength(e.data) });
    } catch (err) {
      this.#noise.line('invalid-message', e.data, (err as Error).message);
    }
  }

  /**
   * A POST refused with 401 is sent once more with a fresh token, as over Streamable HTTP: the token was
   * revoked or rotated before its expiry. Without it every message failed with the 401 until the cached
   * token's renewal (an hour), while the stream, opened with the old token, stayed up.
   */
  send(message: JsonRpcMessage): Promise<void> {
    return this.#post(message, false);
  }

  async #post(message: JsonRpcMessage, retried: boolean): Promise<void> {
    if (this.#closed || !this.#endpoint) throw this.#unsent ?? new Error('transport closed'); // closing as the session was forgotten: never sent
    this.#unanswered.begin(message);
    try {
      await this.#postOnce(message, retried, this.#endpoint);
    } finally {
      this.#unanswered.end(message);
    }
  }

  async #postOnce(message: JsonRpcMessage, retried: boolean, endpoint: string): Promise<void> {
    const headers = await upstreamHeaders(this.#cfg.headers, this.#credentials, { 'content-type': 'application/json', ...traceHeaders(message) });
    const res = await upstreamRequest(endpoint, {
      method: 'POST',
      body: JSON.stringify(message),
      headers,
      dispatcher: this.#http.requests,
      signal: this.#closer.signal,
      headersTimeout: this.#cfg.http.headersTimeoutMs,
      bodyTimeout: this.#cfg.http.bodyTimeoutMs,
    });
    if (res.statusCode === 401 && this.#credentials && !retried) {
      await discard(res.body, this.#cfg.http.bodyTimeoutMs);
      this.#credentials.invalidate(sentBearer(headers));
      return this.#post(message, true);
    }
    keepSentCredentials(res, headers);
    // Bounded in all, not only between bytes (undici's bodyTimeout): a body that trickled held the send, and its connection, for ever.
    const text = await readPrefix(res.body, undefined, this.#cfg.http.bodyTimeoutMs);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      // The upstream forgot us: reconnect. 404, or a 400 that says so: the SDK's documented server answers 400 "No
      // transport found for sessionId", which failed the call as unreachable, counted, and the lost session was kept.
      if (res.statusCode === 404 || (res.statusCode === 400 && /session/i.test(text))) this.#forgotten(message, res.statusCode);
      throw httpRefusal(this.#cfg.name, res, endpoint, refusalDetail(res, text, this.#cfg.headers), false);
    }
  }

  /**
   * A POST refused 404 (or 400 naming the session): the upstream forgot the session (a restart, a replica without its stream). A request so
   * refused was not taken: it fails as never sent, sent again once reconnected (see refusedForSession), before the
   * close fails the calls in flight (it was lost as "crashed", counted by the circuit). The close waits for the
   * POSTs still unanswered, which may be refused too (see UnansweredPosts); the calls it fails, which may have run,
   * fail as the session lost, which the circuit does not count.
   */
  #forgotten(message: JsonRpcMessage, status: number): void {
    if (isRequest(message)) this.onanswerlost?.(message.id, refusedForSession(this.#cfg.name, status));
    this.#unsent ??= refusedForSession(this.#cfg.name, status);
    void this.#close(sessionExpired(this.#cfg.name, status));
  }

  close(): Promise<void> {
    return this.#close();
  }

  async #close(reason?: TransportError): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (reason) await this.#unanswered.settled(UNANSWERED_GRACE_MS);
    this.#closer.abort();
    this.#noise.close();
    this.onclose?.(reason);
  }
}
