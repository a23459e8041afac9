import type { AuditBatch } from './audit-ring.js';

type Line = Readonly<Record<string, unknown>>;

/** Asks every other replica (the admin bus); rejects when the question cannot be put (Redis unreachable). */
export type AskReplicas = (what: 'audit', cursors: Record<string, number>, timeoutMs: number) => Promise<{ answers: Map<string, { value?: unknown; error?: string }> }>;

interface PollLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Reads the other replicas' new audit lines (their AuditRing) every `everyMs` for a console's tail, each
 * line named by its replica; returns the way to stop. A question that cannot be put (Redis down) is
 * logged once per outage: the timer has nobody to answer, and a rejection left unhandled there ended
 * the whole gateway process.
 */
export function pollReplicasAudit(ask: AskReplicas, listener: (line: Line) => void, log: PollLog, everyMs: number): () => void {
  // Own keys only: the replica ids come from the channel (another replica's answer).
  const cursors: Record<string, number> = Object.create(null) as Record<string, number>;
  let asking = false;
  let failing = false;
  const take = (answers: Map<string, { value?: unknown; error?: string }>) => {
    if (failing) log.info({}, 'admin console: audit lines of the other replicas can be read again');
    failing = false;
    for (const [replica, a] of answers) {
      const batch = a.value as AuditBatch | undefined;
      if (a.error !== undefined || !batch || !Array.isArray(batch.lines)) continue;
      cursors[replica] = batch.next;
      for (const line of batch.lines) listener({ ...line, replica });
      if (batch.dropped > 0) log.warn({ replica, dropped: batch.dropped }, 'admin console: audit lines of another replica were dropped before they were read');
    }
  };
  const poll = setInterval(() => {
    if (asking) return;
    asking = true;
    ask('audit', cursors, everyMs)
      .then(({ answers }) => take(answers))
      .catch((err: Error) => {
        if (!failing) log.warn({ err: err.message }, 'admin console: audit lines of the other replicas cannot be read (their calls are missing from the tail until they can)');
        failing = true;
      })
      .finally(() => (asking = false));
  }, everyMs).unref();
  return () => clearInterval(poll);
}
