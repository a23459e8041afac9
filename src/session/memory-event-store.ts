import { STREAMS_KEPT_PER_SESSION, type EventStore, type StoredEvent } from './event-store.js';

/** One stream's events, and when each was appended (the session's count of appends then), in order. */
interface StreamLog {
  events: StoredEvent[];
  at: number[];
}

/** One session's streams (in the order they were opened), its bytes of event data, and its appends. */
interface SessionLog {
  streams: Map<number, StreamLog>;
  bytes: number;
  appended: number;
}

/** The standalone GET stream: one per session, not an answered stream kept for a reader. */
const STANDALONE = 0;

/**
 * Bounded in-memory event log: at most `perStream` events per stream, `streamsPerSession` request
 * streams (the oldest stream goes) and `bytesPerSession` bytes of event data per session. Over the
 * bytes, the oldest events go first whichever stream holds them: the standalone stream (list_changed,
 * resource updates) is not emptied for older answers kept on request streams, nor they for it. The byte
 * bound is what holds against an upstream that sends large notifications to a client that is not
 * reading. A client resuming from an evicted event gets what is left.
 */
export class MemoryEventStore implements EventStore {
  readonly #perStream: number;
  readonly #streamsPerSession: number;
  readonly #bytesPerSession: number;
  readonly #sessions = new Map<string, SessionLog>();
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
    let session = this.#sessions.get(sessionId);
    if (!session) this.#sessions.set(sessionId, (session = { streams: new Map(), bytes: 0, appended: 0 }));
    const log = session.streams.get(stream) ?? this.#open(session, stream);
    log.events.push({ seq, data });
    log.at.push(++session.appended);
    this.buffered++;
    session.bytes += data.length;
    if (log.events.length > this.#perStream) this.#evict(session, log, log.events.length - this.#perStream);
    // Over the session's byte budget: the oldest events go first, whichever stream holds them.
    while (session.bytes > this.#bytesPerSession) {
      const [no, oldest] = this.#oldest(session);
      this.#evict(session, oldest, 1);
      if (oldest.events.length === 0 && no !== stream) session.streams.delete(no);
    }
  }

  /** A new stream's log; a request stream past the bound makes room by dropping the oldest one. */
  #open(session: SessionLog, stream: number): StreamLog {
    const requests = session.streams.size - (session.streams.has(STANDALONE) ? 1 : 0);
    if (stream !== STANDALONE && requests >= this.#streamsPerSession) {
      for (const [no, log] of session.streams) {
        if (no === STANDALONE) continue;
        this.#evict(session, log, log.events.length);
        session.streams.delete(no);
        break;
      }
    }
    const log: StreamLog = { events: [], at: [] };
    session.streams.set(stream, log);
    return log;
  }

  /** The stream whose first event was appended before every other stream's (the session has one). */
  #oldest(session: SessionLog): [number, StreamLog] {
    let found: [number, StreamLog] | undefined;
    for (const entry of session.streams) {
      const at = entry[1].at[0];
      if (at !== undefined && (found === undefined || at < found[1].at[0]!)) found = entry;
    }
    return found!;
  }

  /** Evicts the first `n` events of a stream. */
  #evict(session: SessionLog, log: StreamLog, n: number): void {
    for (const e of log.events.splice(0, n)) session.bytes -= e.data.length;
    log.at.splice(0, n);
    this.buffered -= n;
    this.evicted += n;
  }

  async replay(sessionId: string, stream: number, afterSeq: number): Promise<StoredEvent[] | undefined> {
    const log = this.#sessions.get(sessionId)?.streams.get(stream);
    if (!log) return undefined;
    return log.events.filter((e) => e.seq > afterSeq);
  }

  dropStream(sessionId: string, stream: number): void {
    const session = this.#sessions.get(sessionId);
    const log = session?.streams.get(stream);
    if (!log) return;
    for (const e of log.events) session!.bytes -= e.data.length;
    this.buffered -= log.events.length;
    session!.streams.delete(stream);
  }

  dropSession(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    for (const log of session.streams.values()) this.buffered -= log.events.length;
    this.#sessions.delete(sessionId);
  }
}
