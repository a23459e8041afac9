import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { FORWARD_HEADER, ForwardSignature, forwardSecretKey, type Untrusted } from './forward-signature.js';
import { HttpForward } from './http-forward.js';
import type { RedisObserver } from './redis-connection.js';
import { replayable } from './replayable.js';
import { SeenForwards } from './seen-forwards.js';
import { replyUnavailable } from './unavailable-reply.js';
import { FORWARDED_HEADER, SILENT_HOLDER, type ForwardOutcome, type IncomingForward, type Tunnel } from './tunnel.js';
import { BoundedWarnings } from '../observability/bounded-warnings.js';

/** A request as the edge has it, for the check that it was forwarded by a replica of the group. */
export interface ArrivedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

/** How long an owner found unreachable over HTTP is forwarded to over the tunnel before HTTP is tried again. */
const UNREACHABLE_MS = 60_000;
/** How long, at most, a forward that found no connection to its owner waits for Redis to show the owner gone. */
const GONE_WAIT_MS = 1_500;
/** How often, at most, the secret kept in Redis is read again while one is held. */
const SECRET_RECHECK_MS = 1_000;
/** What follows an advertised URL in a heartbeat: its MAC (see ForwardSignature.advert); a fragment, so never sent. */
const ADVERT_MAC = '#swb-sig=';

/** The warn line of a forward header not believed: its signature does not verify, unless said otherwise here. */
const NOT_VERIFIED = 'a request claims to be forwarded by another replica but its signature does not verify: served as an ordinary client request';
const UNTRUSTED: Partial<Record<Untrusted, string>> = {
  replayed: 'a request forwarded by another replica was sent again (its signature was believed here already): served as an ordinary client request',
  'replay-memory-full': 'a request forwarded by another replica was not believed: this replica believes each forward once, and remembers as many as it may within 30 s: served as an ordinary client request',
};

export interface ForwarderOptions {
  redis: Redis;
  prefix: string;
  me: string;
  /** store.redis.forwardSecret; absent: one shared through Redis. */
  secret: string | undefined;
  /** How long the secret shared through Redis lives past the last beat of any replica (each beat renews it). */
  secretTtlMs: number;
  timeoutMs: number;
  logger: Logger;
  observer: RedisObserver | undefined;
  /** The Redis tunnel (the fallback, and what marks requests run here for a dead owner). */
  tunnel: () => Tunnel;
  /** Which of these replicas are gone by the evidence in Redis (empty when that cannot be known now). */
  gone: (replicas: readonly string[]) => Promise<Set<string>>;
  /** Whether a replica's heartbeat is current (asked while a forward waits for its answer, and while it streams over HTTP). */
  alive: (replica: string) => Promise<boolean>;
  /** Publishes this replica's heartbeat now (its URL became known). */
  beat: () => void;
}

/**
 * Requests between replicas: a request for a session another replica owns goes to that owner over
 * HTTP (HttpForward), signed with the group's secret (ForwardSignature); the owner believes a request
 * forwarded only when the signature verifies. An owner that has not advertised a URL (an older version
 * during a rolling upgrade, or one that does not listen yet), or that Redis shows alive but HTTP cannot
 * reach, is forwarded to over the Redis tunnel as before.
 */
export class Forwarder {
  readonly #o: ForwarderOptions;
  readonly #http: HttpForward;
  #signature: ForwardSignature | undefined;
  #loadingSecret: Promise<void> | undefined;
  /** The secret kept in Redis that #signature holds (none when store.redis.forwardSecret is set). */
  #secretText: string | undefined;
  #checkedAt = 0;
  /** Where this replica takes forwards (known once it listens). */
  #url: string | undefined;
  /** Where each other replica takes forwards, from its heartbeat (a replica's URL never changes). */
  readonly #urls = new Map<string, string>();
  /** Owners alive by Redis that could not be reached over HTTP, until when the tunnel is used for them. */
  readonly #unreachable = new Map<string, number>();
  /** Verdicts on requests' forward headers, so a request asked twice is verified (and counted) once. */
  readonly #verdicts = new WeakMap<object, boolean>();
  /** The forwards believed here lately, so each is believed once (kept across a change of secret). */
  readonly #seen = new SeenForwards();
  readonly #logger: Logger;
  /**
   * The untrusted forwards' warn lines, bounded: anyone who can reach the port may send the header, and
   * before 2026-12-07 each request wrote one (the metric counts every one).
   */
  readonly #untrustedWarnings: BoundedWarnings;

  constructor(o: ForwarderOptions) {
    this.#o = o;
    this.#logger = o.logger;
    this.#untrustedWarnings = new BoundedWarnings(o.logger, 'requests claiming to be forwarded that were not believed were not logged, over the rate (each is counted in switchboard_cluster_untrusted_forwards_total)');
    this.#http = new HttpForward(o.me, o.timeoutMs, o.logger);
    if (o.secret) this.#signature = new ForwardSignature(o.secret, this.#seen);
  }

  /** Where this replica takes forwards, once it listens (the heartbeat's value). */
  get url(): string | undefined {
    return this.#url;
  }

  /**
   * The heartbeat's value: this replica's URL once it listens, with a MAC over it when
   * store.redis.forwardSecret is set (a fragment: versions before it never send it on).
   */
  get advertisement(): string | undefined {
    const url = this.#url;
    return url && this.#o.secret ? `${url}${ADVERT_MAC}${this.#signature!.advert(this.#o.me, url)}` : url;
  }

  /**
   * A replica's heartbeat value: its URL when it advertises one. With store.redis.forwardSecret set, only
   * one whose MAC verifies: Redis access alone must not decide where clients' requests go; a replica
   * without one (an older version, a planted heartbeat) is reached over the tunnel, which only replicas hear.
   */
  learn(replica: string, value: string): void {
    const at = value.indexOf(ADVERT_MAC);
    const beat = at < 0 ? value : value.slice(0, at);
    if (!/^https?:\/\//.test(beat) || this.#urls.get(replica) === beat) return;
    if (this.#o.secret && (at < 0 || !this.#signature!.advertOk(replica, beat, value.slice(at + ADVERT_MAC.length)))) return;
    // Replica ids are random per process: bounded, so years of restarts do not pile up (refilled on use).
    if (this.#urls.size >= 1024) this.#urls.clear();
    this.#urls.set(replica, beat);
  }

  /** Reads the shared secret at start; Redis may still be connecting (a bounded wait, then later requests retry). */
  async start(): Promise<void> {
    for (let i = 0; i < 50 && !this.#signature; i++) {
      if (this.#o.redis.status === 'ready') await this.#loadSecret();
      if (!this.#signature) await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * What a request says of its forwarding before its body is read: 'proven' (the tunnel's mark, which
   * this process set), 'claimed' (a signature header, which covers the body), or nothing.
   */
  forwardClaim(req: ArrivedRequest): 'proven' | 'claimed' | undefined {
    if (req.headers[FORWARDED_HEADER] === this.#o.tunnel().mark) return 'proven';
    return req.headers[FORWARD_HEADER] === undefined ? undefined : 'claimed';
  }

  /**
   * Whether a request was forwarded by a replica of the group, not sent by a client that says so: it
   * came through the tunnel (this process marked it), or over HTTP with a valid signature not seen here
   * before (see ForwardSignature). A forward header that is not believed is ignored (the request is an
   * ordinary client request), counted and logged. Verified once a request: the verdict is kept, as a
   * second look would find the signature seen.
   */
  forwarded(req: ArrivedRequest): boolean {
    const { headers } = req;
    if (headers[FORWARDED_HEADER] === this.#o.tunnel().mark) return true;
    const header = headers[FORWARD_HEADER];
    if (header === undefined) return false;
    const known = this.#verdicts.get(headers);
    if (known !== undefined) return known;
    const verdict = this.#verify(typeof header === 'string' ? header : header.join(','), req);
    this.#verdicts.set(headers, verdict);
    return verdict;
  }

  #verify(header: string, req: ArrivedRequest): boolean {
    const session = req.headers['mcp-session-id'];
    const body = typeof req.body === 'string' ? req.body : undefined;
    const v = this.#signature?.verify(header, this.#o.me, { method: req.method, url: req.url, session: typeof session === 'string' ? session : undefined, body });
    if (v && 'replica' in v) return true;
    const reason: Untrusted = v ? v.untrusted : 'bad-signature';
    if (!this.#signature) void this.#loadSecret();
    else if (reason === 'bad-signature') this.#recheckSecret();
    this.#o.observer?.untrusted?.(reason);
    this.#untrustedWarnings.warn({ reason, from: header.split(',')[1]?.slice(0, 64), method: req.method, url: req.url.slice(0, 200) }, UNTRUSTED[reason] ?? NOT_VERIFIED);
    return false;
  }

  /**
   * The secret that signs forwards: store.redis.forwardSecret, else one random secret kept in Redis
   * (created by the first replica, SET NX, read by every other). Retried later while Redis is away.
   * Read again too while one is held (#recheckSecret): Redis may have lost it (a restart without
   * persistence, a flush), and a replica started since then made another, which no replica holding the
   * old one would believe, nor it them. A replica writes back the secret it holds, SET NX: the first
   * writer wins and every other adopts its secret when it reads it, so the group converges.
   */
  #loadSecret(): Promise<void> {
    if (this.#o.secret) return Promise.resolve();
    this.#loadingSecret ??= (async () => {
      const key = forwardSecretKey(this.#o.prefix);
      await this.#o.redis.set(key, this.#secretText ?? randomBytes(32).toString('hex'), 'PX', this.#o.secretTtlMs, 'NX');
      const secret = await this.#o.redis.get(key);
      if (!secret || secret === this.#secretText) return;
      if (this.#secretText) this.#logger.warn('the forward secret in redis changed (it lost its data): adopting the one there');
      this.#secretText = secret;
      this.#signature = new ForwardSignature(secret, this.#seen);
    })()
      .catch((err: Error) => this.#logger.debug({ err: err.message }, 'the forward secret could not be read from redis yet'))
      .finally(() => (this.#loadingSecret = undefined));
    return this.#loadingSecret;
  }

  /**
   * Reads the shared secret again, at most once a second: when a forward's signature did not verify
   * here, and when this replica signs one (the owner cannot tell it that its signature failed).
   */
  #recheckSecret(): void {
    if (this.#o.secret || !this.#signature || Date.now() - this.#checkedAt < SECRET_RECHECK_MS) return;
    this.#checkedAt = Date.now();
    void this.#loadSecret();
  }

  /** This replica listens: other replicas forward to `url` from now on (published with the heartbeat). */
  advertise(url: string): void {
    this.#url = url;
    this.#o.beat();
    this.#logger.info({ replica: this.#o.me, advertiseUrl: url }, 'forwards from other replicas come over HTTP to this address');
  }

  /**
   * Forwards a request to the replica that owns its session; `open` gives the response to relay onto.
   * 'owner-gone': the owner is dead and did not get it (or it is harmless twice) — take the session over.
   */
  async forward(owner: string, req: IncomingForward, open: () => ServerResponse): Promise<ForwardOutcome> {
    // An owner advertising this replica's own address (several replicas on loopback in different pods,
    // e.g. sidecar mode) cannot be reached over HTTP: the tunnel reaches it.
    const found = this.#urls.get(owner);
    const url = found !== this.#url ? found : undefined;
    if (!this.#signature) await this.#loadSecret();
    else this.#recheckSecret();
    if (url && this.#signature && !this.#walled(owner)) {
      const sent = await this.#http.send(url, owner, req, this.#signature, open, () => this.#o.alive(owner));
      if (sent === 'relayed') {
        this.#o.observer?.forwarded?.('http');
        return 'relayed';
      }
      if (sent === 'silent') {
        // It has the request (dead, or frozen: it runs it when it wakes): invited back only when harmless twice.
        if (replayable(req.method, req.body)) replyUnavailable(open(), req.body, 'the replica that owns this session did not answer; retry');
        else replyUnavailable(open(), req.body, SILENT_HOLDER, false);
        return 'relayed';
      }
      // No connection, or it broke before an answer: a killed owner's Redis links close with it, and
      // Redis shows that within moments. Waited for, briefly, so the verdict is evidence, not a guess.
      const gone = await this.#goneSoon(owner);
      if (sent === 'unreached') {
        // It never got the request: taken over here at once.
        if (gone) return 'owner-gone';
        // Alive by Redis, yet not reachable over HTTP (a network policy, a wrong advertiseUrl): the Redis
        // tunnel still reaches it. Warned; forwards to it take the tunnel for a minute, then HTTP is tried again.
        if (this.#unreachable.size >= 1024) this.#unreachable.clear();
        this.#unreachable.set(owner, Date.now() + UNREACHABLE_MS);
        this.#logger.warn({ owner, advertiseUrl: url }, 'a replica is alive but its advertised URL cannot be reached: forwarding to it over Redis for a minute, then trying again (check store.redis.advertiseUrl and the network policy)');
      } else {
        // It may have run the request (dead or alive): run again here, or invite a retry of, only what is harmless twice.
        const twice = replayable(req.method, req.body);
        if (gone && twice) return 'owner-gone';
        if (gone) replyUnavailable(open(), req.body, 'the replica that owned this session died while handling this request, which may have taken effect: not retried; send it again if that is safe', false);
        else if (twice) replyUnavailable(open(), req.body, 'the connection to the replica that owns this session broke; retry');
        else replyUnavailable(open(), req.body, 'the connection to the replica that owns this session broke while it handled this request, which may have taken effect: not retried; send it again if that is safe', false);
        return 'relayed';
      }
    }
    this.#o.observer?.forwarded?.('redis');
    return this.#o.tunnel().forward(owner, req, open, this.#o.timeoutMs, () => this.#o.alive(owner));
  }

  /** Whether `owner` was found unreachable over HTTP lately. */
  #walled(owner: string): boolean {
    const until = this.#unreachable.get(owner);
    if (until === undefined) return false;
    if (Date.now() < until) return true;
    this.#unreachable.delete(owner);
    return false;
  }

  /** Whether Redis shows `owner` gone, asked a few times over a bounded moment (its links may still be closing). */
  async #goneSoon(owner: string): Promise<boolean> {
    const until = Date.now() + GONE_WAIT_MS;
    for (;;) {
      if ((await this.#o.gone([owner])).has(owner)) return true;
      if (Date.now() >= until) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): Promise<void> {
    this.#untrustedWarnings.close();
    return this.#http.close().catch(() => {});
  }
}
