import type { AnsweredRequest } from '../observability/request-tally.js';
import type { ConfirmationOutcome } from '../policy/audit-log.js';

/** One answered client request: declared with the request metrics, which count it (observability may not import session). */
export type RequestDone = AnsweredRequest;

/** What the session layer reports for metrics; the app wires it to Prometheus. */
export interface SessionObserver {
  sessionOpened(transport: string, tenant: string): void;
  sessionClosed(transport: string, tenant: string): void;
  requestDone(r: RequestDone): void;
  denied(reason: string): void;
  rateLimited(limit: string): void;
  /** A confirmation rule asked (or could not ask) the user about a call of this tenant's. */
  confirmation(tenant: string, outcome: ConfirmationOutcome): void;
  /** An upstream's elicitation refused before it reached the client (`reason`: gateway_wording). */
  elicitationRefused(upstream: string, reason: string): void;
}

export const NO_OBSERVER: SessionObserver = {
  sessionOpened() {},
  sessionClosed() {},
  requestDone() {},
  denied() {},
  rateLimited() {},
  confirmation() {},
  elicitationRefused() {},
};
