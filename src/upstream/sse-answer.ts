import type { Dispatcher } from 'undici';
import type { Logger } from '../observability/logger.js';
import { readSse } from '../jsonrpc/read-sse.js';
import { SseParser, SseTooLargeError, type SseMessage } from '../jsonrpc/sse-parser.js';

/** Where a request's SSE streams got to, over all of them: what a resume starts from, and how soon. */
export interface StreamPosition {
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

/**
 * One of a request's SSE streams, read until its answer (or its end, or until it breaks: `broke` hears
 * why). `deliver` hands on each event and says whether it was the answer (true), another message (false) or
 * none (undefined): 'messages' when the stream brought one. `at` is moved to where the stream got (a new id
 * alone is no message: see ResumePace). 'too large': an event over maxEventBytes came before the answer. A resume would replay it
 * (its id is never read), so the stream cannot get past it: the request's answer is taken to be too large.
 */
export async function readAnswerStream(
  body: Dispatcher.ResponseData['body'],
  maxEventBytes: number,
  deliver: (e: SseMessage) => boolean | undefined,
  at: StreamPosition,
  broke: (err: Error) => void,
): Promise<'answered' | 'messages' | 'nothing' | 'too large'> {
  const parser = new SseParser(maxEventBytes);
  let got: 'answered' | 'messages' | 'nothing' | 'too large' = 'nothing';
  try {
    for await (const e of readSse(body, parser)) {
      const answer = deliver(e);
      if (answer !== undefined) got = 'messages';
      if (!answer) continue;
      // The answer is the stream's last message: the server SHOULD end it there. One that keeps it open
      // would hold one of the upstream's http.maxConnections per call for ever, and once all were held no
      // call left at all. Leaving the loop destroys the body, which gives the connection back.
      got = 'answered';
      break;
    }
  } catch (err) {
    if (err instanceof SseTooLargeError) got = 'too large';
    else broke(err as Error);
  }
  at.lastEventId = resumableId(parser.lastEventId, at.lastEventId);
  at.retryMs = parser.retryMs ?? at.retryMs;
  return got;
}

/**
 * What the GET stream's parsers do with an event over maxMessageBytes: skip it, its id taken (see
 * SseParser), and warn. Read to the error instead, its id was never taken: every resume, from before it,
 * replayed it, and the upstream's notifications stopped for good, its reconnects waiting up to 30 s.
 * One warning per event, not one per replay (an upstream may ignore Last-Event-ID).
 */
export function skippedEvents(logger: Logger, upstream: string, maxBytes: number): (id: string | undefined) => void {
  let said: string | undefined | null = null;
  return (id) => {
    if (id !== undefined && id === said) return;
    said = id;
    logger.warn({ upstream, eventId: id, maxMessageBytes: maxBytes }, 'upstream sent an event over http.maxMessageBytes on its GET stream; skipped');
  };
}

/** What a Last-Event-ID header can carry: visible ASCII and spaces, at most 8 KiB (what proxies take in a header line). */
const SENDABLE_ID = /^[\x20-\x7e]{1,8192}$/;

/**
 * The id a stream is resumed from after one that carried `newest` (undefined: none, `previous` stands). The SSE
 * format allows any character but NUL in an id; one no Last-Event-ID header can carry (undici refuses what is not
 * Latin-1 or is a control character; a server refuses a header of tens of KiB) cannot be resumed from: none, and
 * `unsendable` hears of it. Kept, every resume from it failed before it left, or was refused, for ever: the GET
 * stream was never open again (the upstream's notifications lost), a call's stream was retried to its timeout.
 */
export function resumableId(newest: string | undefined, previous: string | undefined, unsendable?: (id: string) => void): string | undefined {
  if (newest === undefined || newest === previous) return previous;
  if (SENDABLE_ID.test(newest)) return newest;
  if (newest !== '') unsendable?.(newest);
  return undefined;
}

/**
 * What the GET stream does with an event id it cannot resume from: one no header can carry (see resumableId), or
 * one whose resume the upstream refused (`refusedWith`, see refusesTheId). It says so, and is opened again
 * without one (undefined): what the upstream sent meanwhile may be missed, but what it sends next is heard.
 */
export function lostPositions(logger: Logger, upstream: string): (id: string, refusedWith?: number) => undefined {
  return (id, refusedWith) => {
    const why = refusedWith === undefined ? 'an event id no Last-Event-ID header can carry (not visible ASCII, or over 8192 characters)' : `a resume refused with HTTP ${refusedWith}`;
    logger.warn({ upstream, eventId: id.slice(0, 100), length: id.length }, `upstream's GET stream: ${why}; opened again without Last-Event-ID, so what it sent meanwhile may be missed`);
    return undefined;
  };
}

/**
 * A resume (a GET with Last-Event-ID) refused with this status was refused for the id it resumes from: unknown,
 * evicted from the event store, too long (431), or no event store at all (the SDK's server: 400). Not a refusal a
 * later try may get past (408, 409, 429) or one about credentials (401, 403).
 */
export function refusesTheId(status: number): boolean {
  return status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 408 && status !== 409 && status !== 429;
}
