/**
 * The load loops shared by both load generators. A loop never runs past its call count or its time
 * limit, whichever comes first, and every call checks that it got its own payload back.
 */

/** One MCP session as the load loops see it, whatever client library or transport is underneath. */
export interface BenchSession {
  /** Calls the echo tool; resolves with the echoed text. `id` forces the JSON-RPC id (raw clients only). */
  call(message: string, id?: number): Promise<string>;
  close(): Promise<void>;
  /** Responses that arrived for no request in flight (a gateway that broadcasts produces these). */
  readonly stray?: number;
}

export interface Limits {
  maxCalls: number;
  maxMs: number;
}

export interface LoadResult {
  inflight: number;
  sessions: number;
  calls: number;
  errors: number;
  /** Answers whose text was not the payload sent: someone else's response. */
  mismatches: number;
  elapsedMs: number;
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  firstError?: string;
}

export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** The echo tool of server-everything prefixes its answer; the bench echo server does not. */
function echoed(text: string, message: string): boolean {
  return text === message || text.endsWith(` ${message}`);
}

let nonce = 0;

/**
 * `inflight` workers each run calls back to back; call k goes to session k mod n, so one in flight
 * over 50 sessions still visits every session. `keep`, when given, receives every call's latency (ms).
 */
export async function runLoad(sessions: readonly BenchSession[], inflight: number, limits: Limits, keep?: number[]): Promise<LoadResult> {
  const started = performance.now();
  const deadline = started + limits.maxMs;
  const latencies: number[] = [];
  let issued = 0;
  let errors = 0;
  let mismatches = 0;
  let firstError: string | undefined;
  const tag = `n${++nonce}`;
  const worker = async () => {
    while (issued < limits.maxCalls && performance.now() < deadline) {
      const k = issued++;
      const message = `${tag}-${k}`;
      const t0 = performance.now();
      try {
        const text = await sessions[k % sessions.length]!.call(message);
        latencies.push(performance.now() - t0);
        if (!echoed(text, message)) mismatches++;
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
        // A broken target must not spin the loop at full speed until the deadline.
        if (errors > 20 && errors > latencies.length) break;
      }
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  const elapsedMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  if (keep) for (const l of latencies) keep.push(l);
  return {
    inflight,
    sessions: sessions.length,
    calls: latencies.length,
    errors,
    mismatches,
    elapsedMs,
    callsPerSec: (latencies.length * 1000) / elapsedMs,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    ...(firstError === undefined ? {} : { firstError }),
  };
}

export interface CrossedResult {
  sessions: number;
  calls: number;
  crossed: number;
  errors: number;
  stray: number;
  firstError?: string;
}

/**
 * Every session sends the same id at the same moment, each with a payload only it knows; any answer
 * carrying another session's payload is a crossed response.
 */
export async function runCrossed(sessions: readonly BenchSession[], rounds: number, maxMs: number): Promise<CrossedResult> {
  const deadline = performance.now() + maxMs;
  let calls = 0;
  let crossed = 0;
  let errors = 0;
  let firstError: string | undefined;
  const secret = Math.random().toString(36).slice(2, 10);
  for (let r = 1; r <= rounds && performance.now() < deadline; r++) {
    await Promise.all(
      sessions.map(async (s, i) => {
        const message = `${secret}-s${i}-r${r}`;
        try {
          // Far above any id the load loops reach, so no session ever reuses an id of its own (the spec forbids it).
          const text = await s.call(message, 1_000_000 + r);
          calls++;
          if (!echoed(text, message)) crossed++;
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }),
    );
  }
  const stray = sessions.reduce((sum, s) => sum + (s.stray ?? 0), 0);
  return { sessions: sessions.length, calls, crossed, errors, stray, ...(firstError === undefined ? {} : { firstError }) };
}

/** Opens n sessions with at most `parallel` handshakes at once, within a time limit; returns those opened. */
export async function openMany(n: number, parallel: number, maxMs: number, open: () => Promise<BenchSession>): Promise<{ sessions: BenchSession[]; failures: number; firstError?: string; elapsedMs: number }> {
  const started = performance.now();
  const deadline = started + maxMs;
  const sessions: BenchSession[] = [];
  let next = 0;
  let failures = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (next < n && performance.now() < deadline) {
      next++;
      try {
        sessions.push(await open());
      } catch (err) {
        failures++;
        firstError ??= (err as Error).message;
        if (failures > 20 && failures > sessions.length) return;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, worker));
  return { sessions, failures, elapsedMs: performance.now() - started, ...(firstError === undefined ? {} : { firstError }) };
}

/** Closes sessions a few at a time; a close that fails is not the benchmark's business. */
export async function closeAll(sessions: readonly BenchSession[], parallel = 32): Promise<void> {
  let i = 0;
  const worker = async () => {
    while (i < sessions.length) await sessions[i++]!.close().catch(() => {});
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}
