import type { SseMessage, SseParser } from './sse-parser.js';

/**
 * The one read loop for every SSE body the gateway consumes: `for await (const e of readSse(body,
 * parser))`. Raw bytes go to the parser, which decodes them safely (a character split between chunks
 * arrives whole), bounds every line and event, and does work linear in the input; a body that breaks
 * or an event over the limit ends the iteration with that error. The parser keeps the stream's
 * lastEventId and retry hint for whoever resumes it.
 */
export async function* readSse(body: AsyncIterable<unknown>, parser: SseParser): AsyncGenerator<SseMessage, void, undefined> {
  for await (const chunk of body) {
    parser.push(chunk as string | Uint8Array);
    const events = parser.take();
    if (events) yield* events;
  }
}
