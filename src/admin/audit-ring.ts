/** Audit lines one replica keeps for the consoles of the others, once one of them asks. */
const CAPACITY = 500;
/** Nobody asked this long: the tail is dropped (no line is kept for nobody). */
const IDLE_MS = 60_000;

type Line = Readonly<Record<string, unknown>>;
type Tail = (listener: (line: Line) => void) => (() => void) | undefined;

export interface AuditBatch {
  /** Lines after the cursor asked with, oldest first. */
  lines: Line[];
  /** The cursor to ask with next time. */
  next: number;
  /** Lines written since the cursor that the ring no longer holds. */
  dropped: number;
}

/**
 * The audit lines of this replica that other replicas' consoles read (GET /events shows the whole
 * cluster's calls): a bounded ring, subscribed to the audit log only while some console asks (the first
 * question starts it and is answered with the cursor alone), numbered so that each asker reads from its
 * own cursor, and dropped again after a minute without questions.
 */
export class AuditRing {
  readonly #tail: Tail;
  readonly #capacity: number;
  #lines: Array<{ seq: number; line: Line }> = [];
  #seq = 0;
  #untail: (() => void) | undefined;
  #askedAt = 0;
  #idle: NodeJS.Timeout | undefined;

  constructor(tail: Tail, capacity = CAPACITY) {
    this.#tail = tail;
    this.#capacity = capacity;
  }

  /** What was written after `cursor`; undefined when the audit log is off. */
  since(cursor: unknown): AuditBatch | undefined {
    this.#askedAt = Date.now();
    if (!this.#untail) {
      this.#untail = this.#tail((line) => {
        this.#lines.push({ seq: ++this.#seq, line });
        if (this.#lines.length > this.#capacity) this.#lines.shift();
      });
      if (!this.#untail) return undefined;
      this.#idle = setInterval(() => Date.now() - this.#askedAt > IDLE_MS && this.stop(), IDLE_MS).unref();
      return { lines: [], next: this.#seq, dropped: 0 };
    }
    const from = typeof cursor === 'number' && Number.isInteger(cursor) && cursor >= 0 && cursor <= this.#seq ? cursor : this.#seq;
    const kept = this.#lines.filter((l) => l.seq > from);
    const first = kept[0]?.seq ?? this.#seq + 1;
    return { lines: kept.map((l) => l.line), next: this.#seq, dropped: Math.max(0, first - from - 1) };
  }

  stop(): void {
    clearInterval(this.#idle);
    this.#idle = undefined;
    this.#untail?.();
    this.#untail = undefined;
    this.#lines = [];
  }
}
