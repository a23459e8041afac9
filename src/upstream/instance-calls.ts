import type { EventEmitter } from 'node:events';
import type { UpstreamConfig } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Linger } from '../jsonrpc/peer.js';
import type { Logger } from '../observability/logger.js';
import { ATTR } from '../observability/trace-attributes.js';
import type { Tracing } from '../observability/tracing.js';
import { CircuitBreaker, type BreakerState } from './circuit-breaker.js';
import { downError, type DownInstance } from './down-errors.js';
import { eventOrTimeout, settledOrCancelled } from './event-or-timeout.js';
import { retryOf } from './request-retry.js';
import { Semaphore } from './semaphore.js';
import { stoppingError } from './stopping-error.js';
import type { CallOptions, UpstreamClient } from './upstream-client.js';
import { callOptions } from './upstream-client-hooks.js';
import { queueWait } from './upstream-span.js';
import { UpstreamThrottle } from './upstream-throttle.js';

type Params = Record<string, unknown> | undefined;
type Options = Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs'>;

/** The instance its calls go through (UpstreamInstance): its state, why it is down, its 'ready' event. */
export interface CallsInstance extends DownInstance, EventEmitter {}

/** What an instance's calls read of it that it keeps private: read at each call, never copied. */
export interface CallsOwner {
  /** The client calls go to now (none: down, or stopped). */
  client(): UpstreamClient | undefined;
  /** The start under way (state 'starting'), which a call waits for. */
  starting(): Promise<void> | undefined;
  /** Stopped on purpose: it comes back ready never, and a call cut now heard the stop, not a crash. */
  stopping(): boolean;
  /** Aborted by a stop: a retry waiting for a restart gives up. */
  halted(): AbortSignal;
  /** The upstream refused a call as overloaded: the HTTP status it answered (see UpstreamThrottle). */
  throttled(status: number): void;
}

/**
 * One call's way through an instance to its client: the wait for a start under way, a deferral after the
 * upstream's Retry-After, the concurrency limit and its queue, the circuit breaker (and how the call's end
 * counts for it), and one retry of a call the upstream lost. Built once per instance: nothing here is
 * allocated per call beyond what the call itself needs.
 */
export class InstanceCalls {
  readonly #instance: CallsInstance;
  readonly #config: UpstreamConfig;
  readonly #tracing: Tracing;
  readonly #owner: CallsOwner;
  readonly #breaker: CircuitBreaker;
  /** Calls deferred after the upstream throttled one (429, or 503 with Retry-After): not sent until its Retry-After. */
  readonly #throttle: UpstreamThrottle;
  readonly #slots: Semaphore;
  /**
   * A call cancelled once sent keeps its slot until the upstream answers it or concurrency.cancelledHoldMs
   * pass (JsonRpcPeer holds it): a cancellation is advisory, and the server may run the call on. Given back
   * at once (before 2026-12-07), call and cancel, again and again, ran as many calls on an instance as a
   * client liked, whatever concurrency.max said.
   */
  readonly #linger: Linger;

  constructor(instance: CallsInstance, config: UpstreamConfig, logger: Logger, tracing: Tracing, owner: CallsOwner) {
    this.#instance = instance;
    this.#config = config;
    this.#tracing = tracing;
    this.#owner = owner;
    this.#breaker = new CircuitBreaker(config.circuitBreaker.failureThreshold, config.circuitBreaker.resetTimeoutMs);
    // long-lived: per instance
    this.#breaker.onchange = (state) => logger.warn({ circuit: state }, `upstream circuit ${state}`);
    this.#throttle = new UpstreamThrottle(config.name, logger, (status) => owner.throttled(status));
    this.#slots = new Semaphore(config.concurrency.max, config.concurrency.queue);
    const slots = this.#slots;
    this.#linger = { ms: config.concurrency.cancelledHoldMs, hold: () => slots.keep(), release: () => slots.release() };
  }

  /** Its circuit admits a call (not open, nor half-open with its trial out) and no Retry-After defers calls. */
  get admitting(): boolean {
    return this.#breaker.admitting && !this.#throttle.deferring;
  }

  /** When the deferral after a Retry-After ends (performance.now(); past: none). */
  get deferredUntil(): number {
    return this.#throttle.until;
  }

  get circuit(): BreakerState {
    return this.#breaker.state;
  }

  /**
   * Forwards one request: waits for a starting instance, fails fast while it is down or its circuit
   * is open, queues beyond the concurrency limit, and retries once a request never sent, or an
   * idempotent one when the upstream lost its session or restarted underneath it (see retryOf).
   */
  async request(method: string, params: Params, opts: Options): Promise<Record<string, unknown>> {
    try {
      return await this.#once(method, params, opts);
    } catch (err) {
      const retry = retryOf(method, err);
      // Not on an instance stopped on purpose: it comes back ready never, and the wait held the client initTimeoutMs.
      if (retry === undefined || opts.signal?.aborted || this.#owner.stopping()) throw err;
      this.#tracing.event('upstream.retry', { reason: (err as GatewayError).code });
      // A transparent re-initialize: one never sent needs only a start not already under way.
      const state = this.#instance.state;
      if (retry === 'unsent' ? state !== 'starting' : state !== 'ready') {
        await eventOrTimeout(this.#instance, 'ready', this.#config.initTimeoutMs, this.#owner.halted(), opts.signal);
      }
      if (this.#owner.stopping()) throw stoppingError(this.#config.name);
      return this.#once(method, params, opts);
    }
  }

  /** One attempt: not sent while the instance is down, deferring, or its circuit open; queued beyond the limit. */
  async #once(method: string, params: Params, opts: Options): Promise<Record<string, unknown>> {
    const starting = this.#owner.starting();
    if (starting) await settledOrCancelled(starting, opts.signal);
    const name = this.#config.name;
    if (opts.signal?.aborted) throw new GatewayError('SWB_SESSION_CLOSED', 'request cancelled', { upstream: name }); // as a cancelled call fails
    if (this.#instance.state !== 'ready' || !this.#owner.client()) throw downError(this.#instance);
    const deferred = this.#throttle.refusal(); // the upstream asked for quiet (Retry-After): neither sent nor counted
    if (deferred) throw deferred;
    const slot = this.#slots.acquire(this.#config.concurrency.queueTimeoutMs, opts.signal);
    if (slot !== true) await queueWait(this.#tracing, this.#config, slot, opts.signal); // busy, or cancelled while it waited: throws
    const pass = this.#breaker.allow(); // handed back when the call ends: only the trial's own end decides the trial
    try {
      if (!pass) {
        this.#tracing.event('upstream.circuit_open', { [ATTR.upstream]: name });
        throw new GatewayError('SWB_CIRCUIT_OPEN', `upstream "${name}" is failing; ${this.#breaker.refusal}`, { upstream: name });
      }
      const client = this.#owner.client();
      if (!client) throw new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${name}" is unavailable (${this.#instance.state}); retry shortly`, { upstream: name });
      // The upstream answering (progress, a question for the client) decides a half-open trial: a person may take minutes.
      const { requestTimeoutMs, maxRequestTimeoutMs } = this.#config;
      const result = await client.request(method, params, callOptions(opts, requestTimeoutMs, maxRequestTimeoutMs, this.#breaker.heard, this.#linger));
      this.#breaker.success(pass);
      return result;
    } catch (caught) {
      // Cut by a deliberate stop (the gateway's, or a retired pool's at its grace): no crash of the upstream's.
      const cut = this.#owner.stopping() && caught instanceof GatewayError && caught.code === 'SWB_UPSTREAM_CRASHED';
      const err = cut ? stoppingError(name) : caught;
      const code = err instanceof GatewayError ? err.code : undefined;
      this.#throttle.heard(err); // SWB_UPSTREAM_THROTTLED: abandoned below, not a failure (the upstream is alive)
      if (code === 'SWB_UPSTREAM_TIMEOUT' || code === 'SWB_UPSTREAM_UNAVAILABLE' || code === 'SWB_UPSTREAM_CRASHED') this.#breaker.failure(pass);
      else if (code === undefined) this.#breaker.success(pass); // a JSON-RPC error: the upstream is alive and answering
      else this.#breaker.abandon(pass);
      throw err;
    } finally {
      this.#slots.release();
    }
  }
}
