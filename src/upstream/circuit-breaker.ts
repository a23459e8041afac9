export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * Consecutive failures open the circuit: calls fail fast for resetTimeoutMs, then one probe call is let
 * through (half-open); its success closes the circuit, its failure opens it again.
 */
export class CircuitBreaker {
  readonly #threshold: number;
  readonly #resetMs: number;
  #state: BreakerState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #probing = false;
  onchange: ((state: BreakerState) => void) | undefined;

  constructor(failureThreshold: number, resetTimeoutMs: number) {
    this.#threshold = failureThreshold;
    this.#resetMs = resetTimeoutMs;
  }

  get state(): BreakerState {
    if (this.#state === 'open' && Date.now() - this.#openedAt >= this.#resetMs) this.#set('half-open');
    return this.#state;
  }

  /** Whether a call may go now; in half-open only one probe at a time. */
  allow(): boolean {
    const s = this.state;
    if (s === 'closed') return true;
    if (s === 'open' || this.#probing) return false;
    this.#probing = true;
    return true;
  }

  /** ms until a probe is allowed. */
  retryAfterMs(): number {
    return Math.max(0, this.#resetMs - (Date.now() - this.#openedAt));
  }

  /**
   * A call is being answered (a progress notification, a question the upstream put to the client for it):
   * the upstream is alive, which decides a probe in flight as its success would. Else a probe waiting on a
   * person (an elicitation) kept every other call refused, circuit open, for as long as the person took.
   * A field, not a method: every call is handed this one function, none made per call.
   */
  readonly heard = (): void => {
    if (this.#probing) this.success();
  };

  /** The call ended without telling us anything (cancelled): let another probe through. */
  abandon(): void {
    this.#probing = false;
  }

  success(): void {
    this.#failures = 0;
    this.#probing = false;
    if (this.#state !== 'closed') this.#set('closed');
  }

  failure(): void {
    this.#probing = false;
    this.#failures++;
    if (this.#state === 'half-open' || (this.#state === 'closed' && this.#failures >= this.#threshold)) {
      this.#openedAt = Date.now();
      this.#set('open');
    }
  }

  #set(s: BreakerState): void {
    this.#state = s;
    this.onchange?.(s);
  }
}
