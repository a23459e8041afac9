import { createHash, createHmac } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import { PlainLines } from '../observability/plain-lines.js';

export interface AuditEvent {
  tenant: string;
  subject: string;
  session: string;
  endpoint: string;
  method: string;
  upstream: string | undefined;
  name: string;
  decision: 'allow' | 'deny';
  rule: string;
  outcome: 'ok' | 'error' | 'tool_error' | 'denied' | 'cancelled';
  latencyMs: number;
  responseBytes: number;
  /** A call a confirmation rule asked the user about: what came of the question (absent for every other call). */
  confirmation?: ConfirmationOutcome | undefined;
}

/** What came of asking the user to confirm a call (audit lines, the confirmations metric). */
export type ConfirmationOutcome = 'accepted' | 'declined' | 'cancelled' | 'timeout' | 'unsupported';

/** A tool pin event: recorded at first sight, a changed definition (withheld or passed with a warning), an approval, a rejection. */
export interface PinAuditEvent {
  action: 'pinned' | 'withheld' | 'warned' | 'approved' | 'rejected';
  upstream: string;
  /** The upstream's own name for the tool. */
  tool: string;
  /** The hash the tool was held to before this event (absent at first sight). */
  pinnedSha256: string | undefined;
  /** The definition's hash seen (or, for an approval, approved) now. */
  sha256: string;
  /** The start of the new description. */
  summary: string;
  /** Where the pin comes from: the gateway's config, or the store (first sight, then approvals). */
  source: 'config' | 'store';
}

/**
 * Hidden text found in a definition (once per definition and action) or in a call's result: what kind,
 * where, how much, and what was done. Never the text itself.
 */
export interface HiddenTextAuditEvent {
  where: 'definition' | 'result';
  action: 'audit' | 'strip' | 'block';
  endpoint: string;
  upstream: string | undefined;
  /** A tool, prompt or template definition; a tool's, prompt's or resource's result. */
  item: 'tool' | 'prompt' | 'template' | 'resource' | 'instructions' | 'sampling' | 'elicitation' | 'completion' | 'log' | 'progress' | 'cancel';
  /** Definitions: the upstream's own name (uriTemplate for a template); results: the name or URI called. Hidden characters left out. */
  name: string;
  findings: ReadonlyArray<{ kind: string; path: string; count: number }>;
  /** Results: who called. */
  tenant?: string | undefined;
  subject?: string | undefined;
  session?: string | undefined;
}

/** An audit line as written (with its time, ms since the epoch): what a live tail is sent. */
export type AuditLine = Readonly<Record<string, unknown>> & { time: number; msg: 'audit' | 'tool pin' | 'hidden text' };

/** One structured line per audited call. Arguments are never logged; optionally their SHA-256. */
/**
 * o's members, then extra's, in a new object: not `{ ...o, ...extra }`, which on Node 20 (V8 11.3) made a
 * new hidden class on every call (a member added after a leading spread keeps no transition there). Both
 * are the gateway's own objects (no `__proto__` member).
 */
function extended<E extends object>(o: object, extra: E): Record<string, unknown> & E {
  const out: Record<string, unknown> = {};
  for (const k in o) out[k] = (o as Record<string, unknown>)[k];
  for (const k in extra) out[k] = extra[k];
  return out as Record<string, unknown> & E;
}

export class AuditLog {
  readonly #logger: Logger;
  /** The per-call lines: pino's bytes, serialized in one JSON.stringify (plain-lines.ts). */
  readonly #lines: PlainLines;
  readonly #hashArguments: boolean;
  readonly #hashKey: string | undefined;
  readonly #tails = new Set<(line: AuditLine) => void>();

  /** `hashKey` (audit.hashKey): the arguments' hash is an HMAC under it, which nobody without it can test guesses against. */
  constructor(logger: Logger, hashArguments: boolean, hashKey?: string) {
    // Audit lines have a fixed, credential-free shape: no per-line redaction (the costliest part of a
    // log line, and the audit log writes one per call). Their level is their own: a trail that an
    // operator's `logging.level: warn` dropped without a word would be no trail. `silent` (no output at
    // all) silences it too; audit.enabled: false is the way to turn it off alone.
    this.#logger = logger.child({ audit: true }, { redact: [], level: logger.level === 'silent' ? 'silent' : 'info' });
    this.#lines = new PlainLines(this.#logger);
    this.#hashArguments = hashArguments;
    this.#hashKey = hashKey;
  }

  /**
   * One call's line. Its arguments are never written: with `hashArguments` on, their SHA-256 is. They
   * come apart from the event, so that the event itself is the line (no copy of it per call).
   */
  record(e: AuditEvent, args?: unknown): void {
    const line: object = this.#hashArguments && args !== undefined ? extended(e, this.#hash(JSON.stringify(args))) : e;
    this.#lines.info(line, 'audit');
    if (this.#tails.size > 0) this.#tell(extended(line, { time: Date.now(), msg: 'audit' as const }));
  }

  /**
   * A plain SHA-256 of a short or guessable argument (a PIN, an account number) is undone by hashing
   * guesses, by anyone who reads the log; an HMAC under audit.hashKey is not. Both compare equal arguments.
   */
  #hash(json: string): Record<string, string> {
    if (this.#hashKey === undefined) return { argumentsSha256: createHash('sha256').update(json).digest('hex') };
    return { argumentsHmacSha256: createHmac('sha256', this.#hashKey).update(json).digest('hex') };
  }

  /**
   * Every line from now on, as it is written (the admin console's live tail); returns the way to stop.
   * A tail is told synchronously on the request path, so it must only queue the line.
   */
  tail(listener: (line: AuditLine) => void): () => void {
    this.#tails.add(listener);
    return () => this.#tails.delete(listener);
  }

  #tell(line: AuditLine): void {
    for (const t of this.#tails) {
      try {
        t(line);
      } catch {
        // A broken tail must never fail the call being audited.
      }
    }
  }

  /** One line per pin event, apart from the per-call lines (msg "tool pin", event "tool_pin"). */
  pin(e: PinAuditEvent): void {
    this.#logger.info({ event: 'tool_pin', ...e }, 'tool pin');
    if (this.#tails.size > 0) this.#tell({ event: 'tool_pin', ...e, time: Date.now(), msg: 'tool pin' });
  }

  /** One line per hidden-text finding (msg "hidden text", event "hidden_text"), apart from the per-call lines. */
  hiddenText(e: HiddenTextAuditEvent): void {
    this.#logger.info({ event: 'hidden_text', ...e }, 'hidden text');
    if (this.#tails.size > 0) this.#tell({ event: 'hidden_text', ...e, time: Date.now(), msg: 'hidden text' });
  }
}
