import { STREAMS_KEPT_PER_SESSION, type EventStore, type StoredEvent } from './event-store.js';

/**
 * Bounded in-memory event log: at most `perStream` events per stream, `streamsPerSession` streams and
 * `bytesPerSession` bytes of event data per session; the oldest go first. The byte bound is what
 * holds against an upstream that sends large notifications to a client that is not reading. A client
 * resuming from an evicted event gets what is left.
 */
export class MemoryEventStore implements EventStore {
  readonly #perStream: number;
  readonly #streamsPerSession: number;
  readonly #bytesPerSession: number;
  readonly #sessions = new Map<string, Map<number, StoredEvent[]>>();
  readonly #bytes = new Map<string, number>();
  /** Events held now, and evicted (by the bounds) so far: for metrics. */
  buffered = 0;
  evicted = 0;

  constructor(perStream: number, streamsPerSession = STREAMS_KEPT_PER_SESSION, bytesPerSession = 8 * 1024 * 1024) {
    this.#perStream = perStream;
    this.#streamsPerSession = streamsPerSession;
    this.#bytesPerSession = bytesPerSession;
  }

  append(sessionId: string, stream: number, seq: number, data: string): void {
    if (this.#perStream === 0) return;
    let streams = this.#sessions.get(sessionId);
    if (!streams) this.#sessions.set(sessionId, (streams = new Map()));
    let events = streams.get(stream);
    if (!events) {
      if (streams.size >= this.#streamsPerSession) {
        const oldest = streams.keys().next().value!;
        this.#dropEvents(sessionId, streams.get(oldest)!, true);
        streams.delete(oldest);
      }
      streams.set(stream, (events = []));
    }
    events.push({ seq, data });
    this.buffered++;
    let bytes = (this.#bytes.get(sessionId) ?? 0) + data.length;
    if (events.length > this.#perStream) {
      for (const e of events.splice(0, events.length - this.#perStream)) {
        bytes -= e.data.length;
        this.#forget(1, true);
      }
    }
    // Over the session's byte budget: the oldest events of its oldest streams go first.
    for (const [no, list] of streams) {
      if (bytes <= this.#bytesPerSession) break;
      while (list.length > 0 && bytes > this.#bytesPerSession) {
        bytes -= list.shift()!.data.length;
        this.#forget(1, true);
      }
      if (list.length === 0 && no !== stream) streams.delete(no);
    }
    this.#bytes.set(sessionId, bytes);
  }

  #dropEvents(sessionId: string, events: StoredEvent[], evicted: boolean): void {
    let bytes = this.#bytes.get(sessionId) ?? 0;
    for (const e of events) bytes -= e.data.length;
    this.#bytes.set(sessionId, bytes);
    this.#forget(events.length, evicted);
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
    this.#dropEvents(sessionId, events, false);
    streams!.delete(stream);
  }

  dropSession(sessionId: string): void {
    const streams = this.#sessions.get(sessionId);
    if (!streams) return;
    for (const events of streams.values()) this.#forget(events.length, false);
    this.#sessions.delete(sessionId);
    this.#bytes.delete(sessionId);
  }
}
