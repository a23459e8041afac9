/** The kind of client a call came from: its transport and the sharing of the upstream behind it. */
/** modern/shared: a 2026-07-28 client (SDK v2 pinned): stateless requests, each to the next live replica. */
export type ClientKind = 'streamable/shared' | 'streamable/per-session' | 'sse/shared' | 'modern/shared';

export type Outcome = 'correct' | 'crossed' | 'failed' | 'lost';

export interface CallRecord {
  kind: ClientKind;
  sentAt: number;
  endedAt: number;
  outcome: Outcome;
  error?: string;
}

/** A fault the scheduler caused, over the time it took (an instant for a kill). */
export interface FaultRecord {
  kind: string;
  from: number;
  to: number;
  detail: string;
}

export interface KindReport {
  sent: number;
  correct: number;
  crossed: number;
  lost: number;
  /** Of the lost: sent outside every fault window (never answered, and nothing excuses it). */
  lostOutsideFault: number;
  failedDuringFault: number;
  failedOutsideFault: number;
  /** A few of the errors of calls that failed outside every fault window, and of lost calls. */
  outsideErrors: string[];
  lostErrors: string[];
}

/**
 * Every call the verifiers made and every fault the scheduler caused. A failed (or lost) call is "during
 * a fault" when a fault's window overlaps the call's own: it was in flight on a process that died, or
 * sent while Redis was frozen or restarting (a Redis fault's window ends when every replica is ready
 * again). Otherwise it was sent after the failure was over, and should not have failed.
 */
export class Ledger {
  readonly calls: CallRecord[] = [];
  readonly faults: FaultRecord[] = [];

  call(r: CallRecord): void {
    this.calls.push(r);
  }

  fault(kind: string, from: number, detail: string, to = from): void {
    this.faults.push({ kind, from, to, detail });
  }

  #duringFault(c: CallRecord): boolean {
    return this.faults.some((f) => f.from <= c.endedAt && f.to >= c.sentAt);
  }

  report(): Record<ClientKind, KindReport> {
    const out = {} as Record<ClientKind, KindReport>;
    for (const c of this.calls) {
      const r = (out[c.kind] ??= { sent: 0, correct: 0, crossed: 0, lost: 0, lostOutsideFault: 0, failedDuringFault: 0, failedOutsideFault: 0, outsideErrors: [], lostErrors: [] });
      r.sent++;
      if (c.outcome === 'correct') r.correct++;
      else if (c.outcome === 'crossed') r.crossed++;
      else if (c.outcome === 'lost') {
        r.lost++;
        if (!this.#duringFault(c)) r.lostOutsideFault++;
        if (r.lostErrors.length < 5) r.lostErrors.push(`${clock(c.sentAt)} ${c.error?.slice(0, 160)}`);
      }
      else if (this.#duringFault(c)) r.failedDuringFault++;
      else {
        r.failedOutsideFault++;
        if (r.outsideErrors.length < 5) r.outsideErrors.push(`${clock(c.sentAt)} ${c.error?.slice(0, 160)}`);
      }
    }
    return out;
  }

  /** Every fault, with its window on the wall clock (to read against the errors' times). */
  timeline(): string[] {
    return this.faults.map((f) => `${clock(f.from)}-${clock(f.to)} ${f.kind}: ${f.detail}`);
  }

  faultCounts(): Record<string, number> {
    const n: Record<string, number> = {};
    for (const f of this.faults) n[f.kind] = (n[f.kind] ?? 0) + 1;
    return n;
  }
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
