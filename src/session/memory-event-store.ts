import type { EventStore, StoredEvent } from './event-store.js';

/**
 * Bounded in-memory event log: at most `perStream` events per stream and `streamsPerSession` streams
 * per session; the oldest go first. A client resuming from an evicted event gets what is left.
 */
export class MemoryEventStore implements EventStore {
  readonly #perStream: number;
  readonly #streamsPerSession: number;
  readonly #sessions = new Map<string, Map<number, StoredEvent[]>>();

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
      if (streams.size >= this.#streamsPerSession) streams.delete(streams.keys().next().value!);
      streams.set(stream, (events = []));
    }
    events.push({ seq, data });
    if (events.length > this.#perStream) events.splice(0, events.length - this.#perStream);
  }

  async replay(sessionId: string, stream: number, afterSeq: number): Promise<StoredEvent[] | undefined> {
    const events = this.#sessions.get(sessionId)?.get(stream);
    if (!events) return undefined;
    return events.filter((e) => e.seq > afterSeq);
  }

  dropStream(sessionId: string, stream: number): void {
    this.#sessions.get(sessionId)?.delete(stream);
  }

  dropSession(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }
}
