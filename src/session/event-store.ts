/**
 * The log behind SSE resumability. Each session's streams are numbered; each event is numbered within
 * its stream, so an event id "<stream>_<seq>" says which stream to replay. Memory now, Redis later.
 */
/**
 * How many streams of one session are kept resumable. The event store keeps the events of at most this
 * many streams, and the edge remembers at most this many answered streams: one number, so neither keeps
 * what the other has already let go of.
 */
export const STREAMS_KEPT_PER_SESSION = 64;

/** What a session's log keeps: events per stream (0: none, no resumption) and bytes of them in all. */
export interface EventBounds {
  perStream: number;
  bytesPerSession: number;
}

export interface StoredEvent {
  seq: number;
  data: string;
}

export interface EventStore {
  append(sessionId: string, stream: number, seq: number, data: string): void;
  /** Events after `afterSeq` on that stream, or undefined when the stream is unknown. */
  replay(sessionId: string, stream: number, afterSeq: number): Promise<StoredEvent[] | undefined>;
  /** The stream was delivered in full: its events are no longer needed. */
  dropStream(sessionId: string, stream: number): void;
  dropSession(sessionId: string): void;
  /** The last sequence number logged on a stream (a shared store lets a new owner continue after it). */
  lastSeq?(sessionId: string, stream: number): Promise<number>;
  /** The highest stream number the log holds events of for the session (0: none), so a new owner numbers above it. */
  lastStream?(sessionId: string): Promise<number>;
}
