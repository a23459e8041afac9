// The shape of a per-call audit line, shared by the audit log and each caller's writer (types only).

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
  /** A call a confirmation rule asked the user about: what came of the question (absent for every other call). */
  confirmation?: ConfirmationOutcome | undefined;
}

/** What came of asking the user to confirm a call (audit lines, the confirmations metric). */
export type ConfirmationOutcome = 'accepted' | 'declined' | 'cancelled' | 'timeout' | 'unsupported';

/** An audit line as written (with its time, ms since the epoch): what a live tail is sent. */
export type AuditLine = Readonly<Record<string, unknown>> & { time: number; msg: 'audit' | 'tool pin' | 'hidden text' };
