import type { Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { parseText, validateMessage } from '../jsonrpc/parse.js';
import type { SseMessage } from '../jsonrpc/sse-parser.js';
import { isNotification, isRequest, isResponse, type JsonRpcMessage, type RequestId } from '../jsonrpc/types.js';
import type { Logger } from '../observability/logger.js';
import { type MessageExtra, type Transport, TransportError } from '../transport/transport.js';
import type { BearerSource } from './bearer-source.js';
import { headerValue, modernHeaders, sentBearer, traceHeaders, upstreamHeaders } from './http-headers.js';
import { metaVersion } from '../jsonrpc/modern-meta.js';
import { NoiseLog } from './noise-log.js';
import { upstreamRequest } from './upstream-request.js';
import { keepSentCredentials, refusalWithoutCredentials } from './sent-credentials.js';
import { answerTooLarge, headersTooLarge, httpRefusal, isEncodedAnswer, refusedForSession, sessionExpired, UpstreamHttpError } from './remote-errors.js';
import { withoutDeep } from './deep-messages.js';
import { cancelThenLetGo } from './cancel-then-let-go.js';
import { discard, letGo, readBounded, readPrefix } from './read-body.js';
import { RequestTable } from '../jsonrpc/request-table.js';
import { readAnswerStream, type StreamPosition } from './sse-answer.js';
import { MAX_IDLE_RESUMES, ResumePace } from './resume-pace.js';
import { realClock, type PaceClock } from './pace-clock.js';
import { runGetStream, type GetStreamLink } from './get-stream.js';
import { dispatchersOf, type RemoteDispatchers } from './remote-agents.js';
import { endSession } from './end-session.js';
import { MAX_UNTAKEN_ANSWERS, UNANSWERED_GRACE_MS, UnansweredPosts } from './unanswered-posts.js';
import { abortWith, sharedAbortSignal } from './abort-link.js';
import { refuseEncoded, refusalDetail } from './content-encoding.js';
import type { GatewayError } from '../errors.js';

/**
 * The gateway as a Streamable HTTP client of one remote upstream session: POST per message (JSON or
 * SSE answers, resumed with Last-Event-ID when a stream drops before its answer), the GET stream for
 * server-initiated messages (opened and confirmed before the instance counts as ready, reconnected
 * with Last-Event-ID), the session id and protocol version headers, DELETE on close.
 */
export class StreamableHttpClientTransport implements Transport {
  readonly #cfg: RemoteUpstreamConfig;
  readonly #http: RemoteDispatchers;
  readonly #credentials: BearerSource | undefined;
  readonly #logger: Logger;
  readonly #noise: NoiseLog;
  /** The clock streams are timed and paced by (see ResumePace, ReopenWaits). */
  readonly #clock: PaceClock;
  readonly #closer = sharedAbortSignal(new AbortController());
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #initializeId: RequestId | undefined;
  #getStream: Promise<void> | undefined;
  /** Modern requests whose answer is still awaited: cancelling one closes its stream. */
  readonly #modernInFlight = new RequestTable<AbortController>();
  /** 2025-era requests whose POST (with its stream and resumes) is open: giving one up closes it. */
  readonly #legacyInFlight = new RequestTable<AbortController>();
  #closed = false;
  /** The POSTs whose answer has not yet said whether they were taken; and what a send fails with once the session is forgotten. */
  readonly #unanswered = new UnansweredPosts(() => this.#logger.warn({ upstream: this.#cfg.name, max: MAX_UNTAKEN_ANSWERS }, 'upstream asks faster than it takes the answers; answers past the bound are not sent'));
  #unsent: GatewayError | undefined;
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  /** With a 'session-expired' reason when the upstream forgot our session: re-initialize (see UpstreamInstance). */
  onclose?: (reason?: TransportError) => void;
  onerror?: (error: Error) => void;
  toolDefinition?: ((name: string) => Readonly<Record<string, unknown>> | undefined) | undefined;
  onanswerlost?: (requestId: RequestId, error: Error) => void;
  /** An event too deep to relay (withoutDeep): the request it answers fails now, its stream let go, and the event is logged. */
  readonly #lostAnswer = (id: RequestId | undefined, err: Error): never => {
    if (id !== undefined) this.onanswerlost?.(id, err);
    if (id !== undefined) (this.#legacyInFlight.get(id) ?? this.#modernInFlight.get(id))?.abort();
    throw err;
  };

  /** `dispatcher`: a RemoteAgents, whose streams never take the connections calls need; one Dispatcher serves both. */
  constructor(cfg: RemoteUpstreamConfig, dispatcher: Dispatcher | RemoteDispatchers, credentials: BearerSource | undefined, logger: Logger, clock: PaceClock = realClock) {
    this.#cfg = cfg;
    this.#http = dispatchersOf(dispatcher);
    this.#credentials = credentials;
    this.#logger = logger;
    this.#noise = new NoiseLog(logger, Date.now, 'SSE event');
    this.#clock = clock;
  }

  async start(): Promise<void> {}

  /** `stateless`: a 2026-07-28 request, which names its own version and belongs to no session. */
  async #headers(extra: Record<string, string>, stateless: boolean): Promise<Record<string, string>> {
    const h = await upstreamHeaders(this.#cfg.headers, this.#credentials, extra);
    if (stateless) return h;
    if (this.#sessionId) h['mcp-session-id'] = this.#sessionId;
    if (this.#protocolVersion) h['mcp-protocol-version'] = this.#protocolVersion;
    return h;
  }

  /**
   * One HTTP request to the upstream; a 401 with client credentials gets one retry with a fresh token.
   * `o.signal`: a request's own cancellation (else the transport's); `o.stateless`: see #headers.
   * `o.request`: the POST carries a request, whose headers may come only with its answer (a JSON answer
   * is sent whole): its own timeout bounds the wait, as giving up on it aborts the POST (see cancelThenLetGo);
   * headersTimeoutMs cut calls short as "unreachable", and sent no cancellation. A backstop stays.
   * `o.stream`: the instance's lasting stream (GET, listen), which goes on a connection of its own (see RemoteDispatchers).
   */
  async #request(method: 'POST' | 'GET' | 'DELETE', extra: Record<string, string>, body?: string, o: { signal?: AbortSignal; stateless?: boolean; request?: boolean; stream?: boolean } = {}, retried = false): Promise<Dispatcher.ResponseData> {
    const headers = await this.#headers(extra, o.stateless === true);
    const res = await upstreamRequest(this.#cfg.url, {
      method,
      body,
      headers,
      dispatcher: o.stream ? this.#http.streams : this.#http.requests,
      signal: o.signal ?? this.#closer.signal,
      headersTimeout: o.request ? Math.max(this.#cfg.http.headersTimeoutMs, this.#cfg.maxRequestTimeoutMs ?? 0) : this.#cfg.http.headersTimeoutMs,
      // SSE bodies idle by design; JSON bodies are bounded by the configured timeout when read.
      bodyTimeout: 0,
    });
    if (res.statusCode === 401 && this.#credentials && !retried) {
      await discard(res.body, this.#cfg.http.bodyTimeoutMs);
      this.#credentials.invalidate(sentBearer(headers));
      return this.#request(method, extra, body, o, true);
    }
    keepSentCredentials(res, headers);
    return res;
  }

  /**
   * notifications/initialized resolves only once the GET stream is confirmed (or refused with 405):
   * the upstream may send on it at once, and a session that counts as ready must not miss that.
   */
  async send(message: JsonRpcMessage): Promise<void> {
    await this.#post(message);
    if (isNotification(message) && message.method === 'notifications/initialized') await this.#standalone();
  }

  async #post(message: JsonRpcMessage): Promise<void> {
    if (this.#closed) throw this.#unsent ?? new Error('transport closed'); // closing as the session was forgotten: never sent
    const cancelled = isNotification(message) && message.method === 'notifications/cancelled' ? (message.params?.requestId as RequestId) : undefined;
    // A modern request is cancelled by closing its stream; no notifications/cancelled goes over HTTP.
    const modernStream = cancelled === undefined ? undefined : this.#modernInFlight.get(cancelled);
    if (modernStream) return modernStream.abort();
    // In an open 2025 session a `_meta` version is its client's (it went sessionless, with the client's
    // MCP-Protocol-Version: refused, and counted against the circuit all clients share).
    const modern = this.#protocolVersion === undefined ? metaVersion((message as { params?: unknown }).params) : undefined;
    if (modern) return this.#postModern(message, modern);
    const stream = cancelled === undefined ? undefined : this.#legacyInFlight.get(cancelled);
    if (stream) return cancelThenLetGo(this.#postLegacy(message, undefined, undefined), stream);
    if (!isRequest(message)) return void (await this.#postLegacy(message, undefined, undefined));
    if (message.method === 'initialize') this.#initializeId = message.id;
    const ac = new AbortController();
    const release = () => this.#legacyInFlight.get(message.id) === ac && this.#legacyInFlight.delete(message.id);
    this.#legacyInFlight.set(message.id, ac);
    const unlink = abortWith(this.#closer.signal, ac);
    try {
      if (!(await this.#postLegacy(message, ac.signal, release))) release();
    } catch (err) {
      release();
      if (ac.signal.aborted && !this.#closer.signal.aborted) return; // given up on: nothing more is expected
      throw err;
    } finally {
      unlink();
    }
  }

  /** One 2025-era POST. True when its answer was read from a stream (`signal` ends it), which then called `ended`. */
  async #postLegacy(message: JsonRpcMessage, signal: AbortSignal | undefined, ended: (() => void) | undefined): Promise<boolean> {
    const named = this.#sessionId; // what a refusal refuses: another POST's refusal may have ended it meanwhile
    let res: Dispatcher.ResponseData;
    this.#unanswered.begin(message);
    try {
      res = await this.#request('POST', { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...traceHeaders(message) }, JSON.stringify(message), signal ? { signal, request: true } : {});
      const sid = headerValue(res.headers, 'mcp-session-id');
      if (sid && !this.#sessionId && !this.#closed) this.#sessionId = sid;
      if ((res.statusCode === 404 || res.statusCode === 400) && (named ?? this.#sessionId) && !(isRequest(message) && message.method === 'initialize')) await this.#refused(message, res);
    } finally {
      this.#unanswered.end(message);
    }
    if (res.statusCode === 202) {
      await discard(res.body, this.#cfg.http.bodyTimeoutMs);
      return false;
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await readPrefix(res.body, undefined, this.#cfg.http.bodyTimeoutMs);
      throw httpRefusal(this.#cfg.name, res, this.#cfg.url, refusalDetail(res, text, this.#cfg.headers));
    }
    const type = String(headerValue(res.headers, 'content-type') ?? '').toLowerCase();
    const related = isRequest(message) ? message.id : undefined;
    if (related === undefined) {
      await letGo(res.body, type, this.#cfg.http.bodyTimeoutMs); // accepted: nothing in its body is for anyone
      return false;
    }
    await refuseEncoded(res, this.#cfg, 'its answer');
    if (type.startsWith('text/event-stream')) {
      // A request's send lasts until its answer: it fails when none can come any more (see #readSse).
      await this.#readSse(res.body, related, signal ?? this.#closer.signal, true).finally(ended);
      return true;
    }
    const text = await readBounded(res.body, this.#cfg.http.maxMessageBytes, this.#cfg.http.bodyTimeoutMs, this.#cfg.name);
    const doc = text.trim() === '' ? [] : parseText(text);
    // Its own answer nested too deep to relay fails the request, saying why (it went unanswered); any other such is dropped.
    const messages = withoutDeep(text, (Array.isArray(doc) ? doc : [doc]).map(validateMessage), (id, err) => {
      if (id === related) throw err;
    });
    for (const m of messages) this.#deliver(m, related, Buffer.byteLength(text));
    // A JSON body is the request's answer or nothing: it is not resumed, and no other stream carries it.
    if (messages.some((m) => isResponse(m) && m.id === related)) return false;
    throw new Error(`it answered request ${related} with a JSON body that is not its answer (${text.trim() === '' ? 'empty' : 'no response with that id'})`);
  }

  /**
   * A 2026-07-28 request: no session, the request headers mirrored from the body (Mcp-Name from the
   * name the upstream itself uses), and its refusals are JSON-RPC answers carried by 4xx statuses.
   */
  async #postModern(message: JsonRpcMessage, version: string): Promise<void> {
    const extra = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modernHeaders(message, version, this.toolDefinition) };
    const related = isRequest(message) ? message.id : undefined;
    const ac = new AbortController();
    if (related !== undefined) this.#modernInFlight.set(related, ac);
    const unlink = abortWith(this.#closer.signal, ac);
    try {
      await this.#sendModern(message, extra, related, ac.signal);
    } catch (err) {
      // Cancelled by the caller: it expects no answer, and none will come.
      if (ac.signal.aborted && !this.#closer.signal.aborted) return;
      throw err;
    } finally {
      unlink();
      if (related !== undefined && this.#modernInFlight.get(related) === ac) this.#modernInFlight.delete(related);
    }
  }

  async #sendModern(message: JsonRpcMessage, extra: Record<string, string>, related: RequestId | undefined, signal: AbortSignal): Promise<void> {
    // The same request path as every other (credentials and their refresh on 401 included).
    const stream = isRequest(message) && message.method === 'subscriptions/listen';
    const res = await this.#request('POST', extra, JSON.stringify(message), { signal, stateless: true, request: related !== undefined, stream });
    if (res.statusCode === 202) return void (await discard(res.body, this.#cfg.http.bodyTimeoutMs));
    if (res.statusCode === 431) {
      await discard(res.body, this.#cfg.http.bodyTimeoutMs);
      throw headersTooLarge(this.#cfg.name);
    }
    const type = String(headerValue(res.headers, 'content-type') ?? '').toLowerCase();
    if (res.statusCode >= 200 && res.statusCode < 300 && related === undefined) return letGo(res.body, type, this.#cfg.http.bodyTimeoutMs);
    await refuseEncoded(res, this.#cfg, 'its answer');
    if (res.statusCode >= 200 && res.statusCode < 300 && type.startsWith('text/event-stream')) {
      // A modern stream is never resumed: one that ends without its answer will not bring it (a restart,
      // a proxy's idle cut), so the request fails now rather than at its timeout, which for a listen
      // stream is never (the instance then listens again).
      if ((await this.#readSse(res.body, related, signal, false)) || related === undefined || signal.aborted) return;
      throw new Error(`it closed the stream of request ${related} before answering it`);
    }
    const text = refusalWithoutCredentials(res, await readBounded(res.body, this.#cfg.http.maxMessageBytes, this.#cfg.http.bodyTimeoutMs, this.#cfg.name), this.#cfg.headers);
    let answer: JsonRpcMessage | undefined;
    try {
      answer = validateMessage(parseText(text));
    } catch {
      answer = undefined;
    }
    // A modern refusal is a JSON-RPC error with a 4xx status: the caller gets the error, not an HTTP failure.
    if (answer && isResponse(answer) && answer.id === related && related !== undefined) return this.#deliver(answer, related, Buffer.byteLength(text));
    throw httpRefusal(this.#cfg.name, res, this.#cfg.url, refusalDetail(res, text, this.#cfg.headers));
  }

  /** `size`: the message's size on the wire in bytes (the body's for a batch): what result limits weigh. */
  #deliver(m: JsonRpcMessage, related: RequestId | undefined, size: number): void {
    // A request answered on another stream (the GET stream, a resumed one): its own stream and resumes
    // wait for nothing more.
    if (isResponse(m) && m.id !== null && m.id !== related) this.#legacyInFlight.get(m.id)?.abort();
    // The negotiated version goes on every later request: the first answer's, the one the client negotiated. A
    // duplicate (a batch of two, a replay on the GET stream) replaced it, and later requests named a version never agreed.
    if (isResponse(m) && m.id === this.#initializeId && 'result' in m && typeof m.result.protocolVersion === 'string') {
      if (this.#protocolVersion === undefined) this.#protocolVersion = m.result.protocolVersion;
      else this.#duplicateInitialize(m.result.protocolVersion);
    }
    this.onmessage?.(m, related === undefined ? { bytes: size } : { relatedRequestId: related, bytes: size });
  }

  /** A second answer to initialize: ignored, warned of once (no more are looked for: a hostile upstream may repeat it). */
  #duplicateInitialize(version: string): void {
    this.#initializeId = undefined;
    this.#logger.warn({ upstream: this.#cfg.name, kept: this.#protocolVersion, ignored: version }, 'upstream answered initialize more than once; the first answer\'s protocol version is kept');
  }

  /** A `message` event's JSON-RPC message, delivered; undefined (and logged) when it is not one. */
  #deliverEvent(e: SseMessage, related: RequestId | undefined): JsonRpcMessage | undefined {
    if (e.event !== 'message') return undefined;
    try {
      const m = withoutDeep(e.data, [validateMessage(parseText(e.data))], this.#lostAnswer)[0]!;
      this.#deliver(m, related, Buffer.byteLength(e.data));
      return m;
    } catch (err) {
      this.#noise.line('invalid-message', e.data, (err as Error).message);
      return undefined;
    }
  }

  /**
   * Reads a request's SSE answer; a `resumable` stream that drops before it is resumed with Last-Event-ID,
   * from the newest id seen on any of its streams (a resume may close before sending one of its own).
   * It is followed as long as the request waits for its answer: an upstream that polls (closes the stream
   * now and then, with or without an event before) is resumed until the answer comes, the request's timeout or
   * cancellation aborts `signal`, or the answer arrives on another stream (see #deliver). The waits between
   * resumes, and the end of too many idle ones: see ResumePace. `signal`: the request was given up on, or the
   * transport closed. A stream that cannot be resumed (no event id, the resume refused) throws: no answer can
   * come, and its request fails now rather than at its timeout.
   */
  async #readSse(body: Dispatcher.ResponseData['body'] | undefined, related: RequestId | undefined, signal: AbortSignal, resumable: boolean): Promise<boolean> {
    const at: StreamPosition = { lastEventId: undefined, retryMs: undefined };
    const deliver = (e: SseMessage) => {
      const m = this.#deliverEvent(e, related);
      // A modern server that tears down a listen cancels it on its stream: that ends the stream too.
      if (m !== undefined && !resumable && related !== undefined && isNotification(m) && m.method === 'notifications/cancelled' && m.params?.requestId === related) {
        this.#modernInFlight.get(related)?.abort();
      }
      return m === undefined ? undefined : isResponse(m) && m.id === related;
    };
    let why = '';
    const broke = (err: Error) => ((why = ` (${err.message})`), !this.#closed && !signal.aborted && this.#logger.debug({ err: err.message }, 'upstream SSE stream broke'));
    for (const pace = new ResumePace(this.#clock.now); ; why = '', pace.opened()) {
      const got = body ? await readAnswerStream(body, this.#cfg.http.maxMessageBytes, deliver, at, broke) : 'nothing';
      if (got === 'answered') return true;
      if (got === 'too large') throw answerTooLarge(this.#cfg.name, this.#cfg.http.maxMessageBytes);
      if (this.#closed || signal.aborted || related === undefined || !resumable) return false;
      if (!at.lastEventId) throw new Error(`it ended the stream of request ${related} before answering it${why}, with no event id to resume it from`);
      const wait = pace.ended(got === 'messages', at.retryMs);
      if (wait === undefined) throw new Error(`it ended the stream of request ${related} ${MAX_IDLE_RESUMES} times in a row within 1 s of its resume, without a message${why}; not resumed again`);
      // Cut short once the request is given up on or the transport closes: an upstream's retry: may say minutes.
      if (!(await this.#clock.sleep(wait, signal))) return false;
      body = undefined;
      try {
        const res = await this.#request('GET', { accept: 'text/event-stream', 'last-event-id': at.lastEventId }, undefined, { signal });
        if (res.statusCode === 200) body = (await refuseEncoded(res, this.#cfg, `the resumed stream of request ${related}`), res.body);
        else await discard(res.body, this.#cfg.http.bodyTimeoutMs);
        if (res.statusCode === 404 && this.#sessionId) throw this.#expired(); // forgotten (it restarted): a new session, as for a POST
        // Another try will not help (a session or stream the upstream does not know), except after a conflict or a rate limit.
        if (res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 409 && res.statusCode !== 429) {
          throw new UpstreamHttpError(this.#cfg.name, res.statusCode, `refused to resume the stream of request ${related}`);
        }
      } catch (err) {
        if ((this.#closed || signal.aborted) && !(err instanceof TransportError)) return false;
        if (err instanceof UpstreamHttpError || isEncodedAnswer(err)) throw err;
        this.#logger.debug({ err: (err as Error).message }, 'resuming an upstream stream failed');
      }
    }
  }

  /** Opens the GET stream after notifications/initialized and resolves when it is confirmed (or refused with 405). */
  #standalone(): Promise<void> {
    this.#getStream ??= new Promise<void>((resolve, reject) => void runGetStream(this.#getStreamLink(), resolve, reject));
    return this.#getStream;
  }

  #getStreamLink(): GetStreamLink {
    const self = this; // the getters read its private state
    return {
      ...{ cfg: this.#cfg, logger: this.#logger, clock: this.#clock, signal: this.#closer.signal },
      get closed() {
        return self.#closed;
      },
      get inSession() {
        return self.#sessionId !== undefined;
      },
      open: (id) => this.#request('GET', { accept: 'text/event-stream', ...(id ? { 'last-event-id': id } : {}) }, undefined, { stream: true }),
      deliver: (e) => this.#deliverEvent(e, undefined) !== undefined,
      expired: () => this.#expired(),
    };
  }

  /**
   * A POST refused for its session: 404 is the spec's answer for an unknown session; many servers (the SDK's own
   * examples) say 400 "No valid session ID" instead. Either way a fresh session, and the request was not taken: it
   * fails as never sent (sent again on the new session), ahead of the close that fails the calls in flight (a
   * tools/call was lost as "crashed"). Throws; another 400 as what it is.
   */
  async #refused(message: JsonRpcMessage, res: Dispatcher.ResponseData): Promise<never> {
    const text = await readPrefix(res.body, undefined, this.#cfg.http.bodyTimeoutMs);
    if (res.statusCode !== 404 && !/session/i.test(text)) throw new UpstreamHttpError(this.#cfg.name, res.statusCode, refusalDetail(res, text, this.#cfg.headers));
    if (isRequest(message)) this.onanswerlost?.(message.id, refusedForSession(this.#cfg.name, res.statusCode));
    throw this.#expired(res.statusCode);
  }

  /** Our session is gone upstream: close, so the instance re-initializes with a fresh one. */
  #expired(status = 404): TransportError {
    const reason = sessionExpired(this.#cfg.name, status);
    this.#sessionId = undefined;
    this.#unsent ??= refusedForSession(this.#cfg.name, status);
    void this.#close(reason);
    return reason;
  }

  close(): Promise<void> {
    return this.#close();
  }

  async #close(reason?: TransportError): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // The session forgotten: its POSTs still unanswered may each be refused too (see UnansweredPosts).
    if (reason) await this.#unanswered.settled(UNANSWERED_GRACE_MS);
    const sid = this.#sessionId;
    this.#closer.abort();
    this.#noise.close();
    if (sid) await endSession(this.#cfg, this.#http.requests, this.#credentials, sid, this.#protocolVersion);
    this.onclose?.(reason);
  }
}
