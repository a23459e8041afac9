import { createHash } from 'node:crypto';
import type { Logger } from '../observability/logger.js';
import type { AuditEvent, AuditLine } from './audit-event.js';

/** Who an audit line is about: the same on every line of one session. */
export type AuditCaller = Pick<AuditEvent, 'tenant' | 'subject' | 'session' | 'endpoint'>;

/** One call's own part of its audit line. */
export type CallAudit = Omit<AuditEvent, keyof AuditCaller>;

export interface CallerAuditOptions {
  /** Log the SHA-256 of a call's arguments (never the arguments). */
  hashArguments: boolean;
  /** The live tails' listener, or undefined while nobody tails (asked per line). */
  tails: () => ((line: AuditLine) => void) | undefined;
}

/**
 * The audit lines of one caller. Its four fixed fields are the bindings of a child logger, which pino
 * serializes once, when the child is made, instead of on every line: the audit line is written per call,
 * and building it was the largest allocation on the request path. The lines read exactly as before
 * (the same fields, in the same order).
 */
export class CallerAudit {
  readonly caller: AuditCaller;
  readonly #logger: Logger;
  readonly #o: CallerAuditOptions;

  constructor(logger: Logger, caller: AuditCaller, o: CallerAuditOptions) {
    this.caller = caller;
    this.#logger = logger.child({ tenant: caller.tenant, subject: caller.subject, session: caller.session, endpoint: caller.endpoint });
    this.#o = o;
  }

  /** Whether this writer names that tenant and subject (a reload may have retargeted the session's tenant). */
  isFor(tenant: string, subject: string): boolean {
    return this.caller.tenant === tenant && this.caller.subject === subject;
  }

  record(call: CallAudit): void {
    const { arguments: args, ...line } = call as CallAudit & { argumentsSha256?: string };
    if (this.#o.hashArguments && args !== undefined) line.argumentsSha256 = createHash('sha256').update(JSON.stringify(args)).digest('hex');
    this.#logger.info(line, 'audit');
    const tell = this.#o.tails();
    if (tell) tell({ ...this.caller, ...line, time: Date.now(), msg: 'audit' });
  }
}
