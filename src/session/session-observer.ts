/** What the session layer reports for metrics; the app wires it to Prometheus. */
export interface SessionObserver {
  sessionOpened(transport: string, tenant: string): void;
  sessionClosed(transport: string, tenant: string): void;
  /** `era`: legacy (a session) or modern (a 2026-07-28 stateless request). */
  requestDone(r: { method: string; endpoint: string; upstream: string; outcome: string; seconds: number; tool: string | undefined; era: 'legacy' | 'modern' }): void;
  denied(reason: string): void;
  rateLimited(limit: string): void;
}

export const NO_OBSERVER: SessionObserver = {
  sessionOpened() {},
  sessionClosed() {},
  requestDone() {},
  denied() {},
  rateLimited() {},
};
