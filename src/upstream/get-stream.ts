import type { Dispatcher } from 'undici';
import type { RemoteUpstreamConfig } from '../config/schema.js';
import { readSse } from '../jsonrpc/read-sse.js';
import { SseParser, type SseMessage } from '../jsonrpc/sse-parser.js';
import type { Logger } from '../observability/logger.js';
import { discard } from './read-body.js';
import { encodedAnswer, foreignEncoding } from './content-encoding.js';
import { httpRefusal, UpstreamHttpError } from './remote-errors.js';
import { ReopenWaits } from './reopen-waits.js';
import type { PaceClock } from './pace-clock.js';
import { lostPositions, refusesTheId, resumableId, skippedEvents } from './sse-answer.js';
import { MAX_TIMER_MS } from '../jsonrpc/peer.js';

/** What a 2025-era session's GET stream needs of its Streamable HTTP transport. */
export interface GetStreamLink {
  readonly cfg: RemoteUpstreamConfig;
  readonly logger: Logger;
  /** The clock streams are timed and paced by (see ReopenWaits). */
  readonly clock: PaceClock;
  /** The transport's close: it ends the waits between streams. */
  readonly signal: AbortSignal;
  /** The transport is closed (or closing): no stream is opened again. */
  readonly closed: boolean;
  /** The gateway holds a session with the upstream, which a 404 ends. */
  readonly inSession: boolean;
  /** A GET, resuming from `lastEventId` when there is one. */
  open(lastEventId: string | undefined): Promise<Dispatcher.ResponseData>;
  /** Hands on the event's message; false when it carried none (not JSON-RPC: logged). */
  deliver(e: SseMessage): boolean;
  /** The upstream forgot the session: the transport closes (see StreamableHttpClientTransport), and says why. */
  expired(): Error;
}

/**
 * The GET stream for server-initiated messages, opened after notifications/initialized: `confirmed` once it is
 * open (or refused with 405: the upstream offers none), `failed` when it cannot be (the first GET refused, the
 * transport closed before). Reopened with Last-Event-ID while the transport lasts, after the waits of ReopenWaits.
 */
export async function runGetStream(link: GetStreamLink, confirmed: () => void, failed: (e: Error) => void): Promise<void> {
  const { cfg, logger } = link;
  let lastEventId: string | undefined;
  let first = true;
  const waits = new ReopenWaits(link.clock, () => logger.warn({ upstream: cfg.name }, 'upstream keeps ending its GET stream at once without a message; reopening it after waits doubling up to 30 s'));
  const skipped = skippedEvents(logger, cfg.name, cfg.http.maxMessageBytes);
  const lost = lostPositions(logger, cfg.name);
  // Closed before the stream was confirmed (the instance stopped while it started): the start waiting
  // on it fails, not hangs (with it every request queued behind the start, and their tenants' slots).
  // After a confirmation this is a no-op.
  const gone = () => failed(new Error(`upstream "${cfg.name}": the transport was closed`));
  // The upstream's last `retry:` (an EventSource's reconnection time, kept until it sends another): every reopening
  // waits at least that long, as the 2025-11-25 transport says a client MUST. Before 2026-12-07 the GET stream went by
  // its own waits alone (250 ms after a working stream), so an upstream asking for room with `retry: 5000` was back
  // at it a quarter of a second later. At most what a timer can wait (a longer delay fires after 1 ms in Node).
  let retryMs = 0;
  while (!link.closed) {
    let retryAfter = 0;
    try {
      const res = await link.open(lastEventId);
      // 405: the upstream offers no standalone stream, so nothing can be lost. A 404 to the first GET, right
      // after the session's initialize and initialized were accepted, says the same in practice (a POST-only
      // route, e.g. Express's default 404): read as an expired session it restarted the upstream in a loop.
      if (res.statusCode === 405 || (res.statusCode === 404 && first)) return void (await discard(res.body, cfg.http.bodyTimeoutMs), confirmed());
      if (res.statusCode === 404 && link.inSession) return void (await discard(res.body, cfg.http.bodyTimeoutMs), failed(link.expired()));
      if (res.statusCode !== 200) {
        await discard(res.body, cfg.http.bodyTimeoutMs);
        // Reopened from that id, it was refused for ever: the upstream's notifications were lost for the session's life.
        if (lastEventId && refusesTheId(res.statusCode)) lastEventId = lost(lastEventId, res.statusCode);
        throw httpRefusal(cfg.name, res, cfg.url, 'on the GET stream');
      }
      const coding = foreignEncoding(res.headers);
      if (coding !== undefined) throw (res.body.destroy(), encodedAnswer(cfg.name, coding, 'its GET stream'));
      if (first) confirmed();
      first = false;
      const parser = new SseParser(cfg.http.maxMessageBytes, undefined, skipped);
      waits.opened();
      // Only a message is progress: a new event id alone (a priming event) started the waits over, and an upstream
      // ending each stream at once with one had the GET stream reopened every 250 ms for the session's life.
      let brought = false;
      try {
        for await (const e of readSse(res.body, parser)) brought = link.deliver(e) || brought;
      } finally {
        lastEventId = resumableId(parser.lastEventId, lastEventId, lost);
        if (parser.retryMs !== undefined) retryMs = Math.min(parser.retryMs, MAX_TIMER_MS);
        waits.ended(brought);
      }
    } catch (err) {
      if (link.closed) return gone();
      if (first) return failed(err as Error);
      retryAfter = throttledReopen(logger, cfg.name, err);
    }
    if (link.closed) return gone();
    await waits.wait(link.signal, Math.max(retryAfter, retryMs));
  }
  gone();
}

/**
 * A GET stream that broke, or was refused reopening: how long its next GET waits at least (ms). Refused as overloaded
 * (429, or 503 with Retry-After), its Retry-After, logged: at ReopenWaits' 250 ms, doubling, it was back within it.
 */
function throttledReopen(logger: Logger, upstream: string, err: unknown): number {
  const retryAfterMs = err instanceof UpstreamHttpError ? (err.retryAfterMs ?? 0) : 0;
  if (retryAfterMs > 0) logger.warn({ upstream, httpStatus: (err as UpstreamHttpError).status, retryAfterMs }, 'upstream throttled its GET stream; reopening it after its Retry-After');
  else logger.debug({ err: (err as Error).message }, 'upstream GET stream broke; reconnecting');
  return retryAfterMs;
}
