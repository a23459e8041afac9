import { createHash } from 'node:crypto';
import type { Logger } from '../observability/logger.js';

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
  arguments?: unknown;
}

/** A tool pin event: recorded at first sight, a changed definition (withheld or passed with a warning), an approval. */
export interface PinAuditEvent {
  action: 'pinned' | 'withheld' | 'warned' | 'approved';
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

/** One structured line per audited call. Arguments are never logged; optionally their SHA-256. */
export class AuditLog {
  readonly #logger: Logger;
  readonly #hashArguments: boolean;

  constructor(logger: Logger, hashArguments: boolean) {
    // Audit lines have a fixed, credential-free shape: no per-line redaction (the costliest part of a
    // log line, and the audit log writes one per call).
    this.#logger = logger.child({ audit: true }, { redact: [] });
    this.#hashArguments = hashArguments;
  }

  record(e: AuditEvent): void {
    const { arguments: args, ...rest } = e;
    const line: Record<string, unknown> = rest;
    if (this.#hashArguments && args !== undefined) line.argumentsSha256 = createHash('sha256').update(JSON.stringify(args)).digest('hex');
    this.#logger.info(line, 'audit');
  }

  /** One line per pin event, apart from the per-call lines (msg "tool pin", event "tool_pin"). */
  pin(e: PinAuditEvent): void {
    this.#logger.info({ event: 'tool_pin', ...e }, 'tool pin');
  }
}
