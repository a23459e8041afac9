import type { EventStore, StoredEvent } from './event-store.js';

/**
 * Bounded in-memory event log: at most `perStream` events per stream and `streamsPerSession` streams
 * per session; the oldest go first. A client resuming from an evicted event gets what is left.
 */
export class MemoryEventStore implements EventStore {
  readonly #perStream: number;
  readonly #streamsPerSession: number;
  readonly #sessions = new Map<string, Map<number, StoredEvent[]>>();
  /** Events held now, and evicted (by the bounds) so far: for metrics. */
  buffered = 0;
  evicted = 0;

  constructor(perStream: number, streamsPerSession = 64) {
    this.#perStream = perStream;
    this.#streamsPerSession = streamsPerSession;
  }

  append(sessionId: string, stream: number, seq: number, data: string): void {
    if (this.#perStream === 0) return;
    let streams = this.#sessions.get(sessionId);
    if (!streams) this.#sessions.set(sessionId, (streams = new Map()));
    let events = streams.get(stream);
    if (!events) {
      if (streams.size >= this.#streamsPerSession) {
        const oldest = streams.keys().next().value!;
        this.#forget(streams.get(oldest)!.length, true);
        streams.delete(oldest);
      }
      streams.set(stream, (events = []));
    }
    events.push({ seq, data });
    this.buffered++;
    if (events.length > this.#perStream) {
      const n = events.length - this.#perStream;
      events.splice(0, n);
      this.#forget(n, true);
    }
  }

  #forget(n: number, evicted: boolean): void {
    this.buffered -= n;
    if (evicted) this.evicted += n;
  }

  async replay(sessionId: string, stream: number, afterSeq: number): Promise<StoredEvent[] | undefined> {
    const events = this.#sessions.get(sessionId)?.get(stream);
    if (!events) return undefined;
    return events.filter((e) => e.seq > afterSeq);
  }

  dropStream(sessionId: string, stream: number): void {
    const streams = this.#sessions.get(sessionId);
    const events = streams?.get(stream);
    if (!events) return;
    this.#forget(events.length, false);
    streams!.delete(stream);
  }

  dropSession(sessionId: string): void {
    const streams = this.#sessions.get(sessionId);
    if (!streams) return;
    for (const events of streams.values()) this.#forget(events.length, false);
    this.#sessions.delete(sessionId);
  }
}
