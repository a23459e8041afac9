export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * A call the breaker let through, handed back when the call ends (success, failure, abandon). The
 * half-open trial has one of its own: only its end decides the trial, whatever else ends meanwhile.
 * A call the breaker refused has none (undefined) and settles nothing: its end once cleared the trial's
 * flag, and the next call went through as a second trial beside the first.
 */
export interface BreakerPass {
  readonly trial: boolean;
}

/** Every call let through while the circuit is closed: one object, none made per call. */
const ORDINARY: BreakerPass = Object.freeze({ trial: false });

/**
 * Consecutive failures open the circuit: calls fail fast for resetTimeoutMs, then one trial call is let
 * through (half-open); its success closes the circuit, its failure opens it again.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #resetMs: number;
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  /** The half-open trial in flight, if any. */
  #trial: BreakerPass | undefined;
  /**
   * The clock the open circuit is timed by (ms): monotonic. By the wall clock, a step back (NTP, a VM
   * resumed) kept the circuit open, every call refused, for as long as the step.
   */
  readonly #now: () => number;
  onchange: ((state: BreakerState) => void) | undefined;

  constructor(failureThreshold: number, resetTimeoutMs: number, now: () => number = () => performance.now()) {
    this.#threshold = failureThreshold;
    this.#resetMs = resetTimeoutMs;
    this.#now = now;
  }

  get state(): BreakerState {
    if (this.#state === 'open' && this.#now() - this.#openedAt >= this.#resetMs) this.#set('half-open');
    return this.#state;
  }

  /**
   * A call would be let through now: closed, or half-open with no trial in flight. What a pool asks before
   * it sends a call here: half-open with its trial out, the instance refuses every other call, and a pool that
   * took it for available sent it calls (fewest in flight: its trial alone) to fail while its siblings served.
   */
  get admitting(): boolean {
    const s = this.state;
    return s === 'closed' || (s === 'half-open' && this.#trial === undefined);
  }

  /** The pass of a call that may go now, to settle it with; undefined: refused. In half-open, one trial at a time. */
  allow(): BreakerPass | undefined {
    const s = this.state;
    if (s === 'closed') return ORDINARY;
    if (s === 'open' || this.#trial) return undefined;
    return (this.#trial = { trial: true });
  }

  /**
   * Why a call is refused now, for its error: while open, how long calls stay paused; half-open, that a
   * probe call is out (the reset time is over: it said "paused for 0 s", and a retry at once was refused too).
   */
  get refusal(): string {
    if (this.state === 'open') return `calls are paused for ${Math.ceil(this.retryAfterMs() / 1000)} s`;
    return 'one probe call is testing whether it is back, and calls wait for its answer; retry shortly';
  }

  /** ms until a trial is allowed. */
  retryAfterMs(): number {
    return Math.max(0, this.#resetMs - (this.#now() - this.#openedAt));
  }

  /**
   * A call is being answered (a progress notification, a question the upstream put to the client for it):
   * the upstream is alive, which decides a trial in flight as its success would. Else a trial waiting on a
   * person (an elicitation) kept every other call refused, circuit open, for as long as the person took.
   * A field, not a method: every call is handed this one function, none made per call.
   */
  readonly heard = (): void => {
    if (this.#trial) this.#close();
  };

  /** The call ended without telling us anything (cancelled): if it was the trial, another one may go. */
  abandon(pass: BreakerPass | undefined): void {
    if (pass && pass === this.#trial) this.#trial = undefined;
  }

  /** The upstream answered: any call's answer shows it alive, a call let through before it opened too. */
  success(pass: BreakerPass | undefined): void {
    if (pass) this.#close();
  }

  /**
   * The trial's failure opens the circuit again. A call let through before the circuit opened that fails
   * now tells nothing the failures that opened it did not: it neither ends the trial nor reopens the circuit.
   */
  failure(pass: BreakerPass | undefined): void {
    if (!pass) return;
    if (pass === this.#trial) {
      this.#trial = undefined;
      return this.#open();
    }
    if (this.#state !== 'closed') return;
    if (++this.#failures >= this.#threshold) this.#open();
  }

  #open(): void {
    this.#openedAt = this.#now();
    this.#set('open');
  }

  #close(): void {
    this.#failures = 0;
    this.#trial = undefined;
    if (this.#state !== 'closed') this.#set('closed');
  }

  #set(s: BreakerState): void {
    this.#state = s;
    this.onchange?.(s);
  }
}
