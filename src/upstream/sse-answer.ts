import type { Dispatcher } from 'undici';
import { readSse } from '../jsonrpc/read-sse.js';
import { SseParser, type SseMessage } from '../jsonrpc/sse-parser.js';

/** Where a request's SSE streams got to, over all of them: what a resume starts from, and how soon. */
export interface StreamPosition {
  lastEventId: string | undefined;
  retryMs: number | undefined;
}

/**
 * One of a request's SSE streams, read to its end (or until it breaks: `broke` hears why). `deliver`
 * hands on each event and says whether it was the answer. `at` is moved to where the stream got: a new
 * id alone (a priming event) counts as progress too, since the stream can now be resumed from later on.
 */
export async function readAnswerStream(
  body: Dispatcher.ResponseData['body'],
  maxEventBytes: number,
  deliver: (e: SseMessage) => boolean,
  at: StreamPosition,
  broke: (err: Error) => void,
): Promise<'answered' | 'events' | 'nothing'> {
  const parser = new SseParser(maxEventBytes);
  let got: 'answered' | 'events' | 'nothing' = 'nothing';
  try {
    for await (const e of readSse(body, parser)) {
      const answer = deliver(e);
      if (got !== 'answered') got = answer ? 'answered' : 'events';
    }
  } catch (err) {
    broke(err as Error);
  }
  if (got === 'nothing' && parser.lastEventId !== undefined && parser.lastEventId !== at.lastEventId) got = 'events';
  at.lastEventId = parser.lastEventId ?? at.lastEventId;
  at.retryMs = parser.retryMs ?? at.retryMs;
  return got;
}
