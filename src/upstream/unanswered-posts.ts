/**
 * How long a session the upstream forgot waits, at most, for its POSTs still unanswered before it closes. Each
 * refused for the session (404, or the 400 some servers send) was not taken, and fails as never sent, to be sent
 * again on the new session; one the upstream took may still bring its answer meanwhile.
 */
export const UNANSWERED_GRACE_MS = 1000;

/**
 * The POSTs of one Streamable HTTP session whose answer has not yet said whether the upstream took them (no
 * headers yet, or a 400 whose body tells). When the upstream forgets the session, several calls sent at once
 * are all refused with it; closing at the first refusal failed the rest with the close, as if they might have
 * run, and they were lost. A counter, not a set: nothing is allocated per POST.
 */
export class UnansweredPosts {
  #count = 0;
  #none: (() => void) | undefined;

  begin(): void {
    this.#count++;
  }

  /** The POST's answer has said (or it failed): once none is left, a wait in `settled` ends. */
  end(): void {
    if (--this.#count === 0) this.#none?.();
  }

  /** Resolves once no POST is unanswered, or after `ms`, whichever is first. */
  async settled(ms: number): Promise<void> {
    if (this.#count === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#none = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.#none = undefined;
  }
}
