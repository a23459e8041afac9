import type { Redis } from 'ioredis';
import { GatewayError } from '../errors.js';
import type { EventStore, StoredEvent } from '../session/event-store.js';

// Drops a session's log only while no other replica owns the session: the copy of one that ended on a
// replica after another took it over (paused past its heartbeat, then idle, or a DELETE it served) must
// not take the new owner's log with it, whose client resumes from it. Released ('') counts as another's:
// the replica that takes it over replays from it.
const DROP_SESSION = `
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
for _, s in ipairs(redis.call('SMEMBERS', KEYS[2])) do redis.call('DEL', ARGV[2] .. s) end
redis.call('DEL', KEYS[2])
return 1`;

/**
 * The resumability log in Redis Streams, one stream per SSE stream, trimmed to about `perStream`
 * entries: any replica can replay a stream after Last-Event-ID. Appends are pipelined and not awaited
 * (the live write already went out); a lost append costs only resumability of that event — which is
 * what a Redis outage costs: the events sent while it was away (or that it lost) cannot be replayed. A
 * replay that cannot read the log fails with SWB_STORE_UNAVAILABLE (503: retry), not "unknown event".
 */
/** Whose sessions this replica's log may drop: this replica's id, and where the store keeps a session's owner. */
export interface SessionOwner {
  me: string;
  key: (sessionId: string) => string;
}

export class RedisEventStore implements EventStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #perStream: number;
  readonly #ttlMs: number;
  readonly #owner: SessionOwner;

  constructor(redis: Redis, prefix: string, perStream: number, ttlMs: number, owner: SessionOwner) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#perStream = perStream;
    this.#ttlMs = ttlMs;
    this.#owner = owner;
  }

  #key(sessionId: string, stream: number): string {
    return `${this.#prefix}ev:${sessionId}:${stream}`;
  }

  append(sessionId: string, stream: number, seq: number, data: string): void {
    if (this.#perStream === 0) return;
    const key = this.#key(sessionId, stream);
    this.#redis
      .multi()
      .xadd(key, 'MAXLEN', '~', String(this.#perStream), '*', 's', String(seq), 'd', data)
      .pexpire(key, this.#ttlMs)
      .sadd(`${this.#prefix}evs:${sessionId}`, String(stream))
      .pexpire(`${this.#prefix}evs:${sessionId}`, this.#ttlMs)
      .exec()
      .catch(() => {});
  }

  async replay(sessionId: string, stream: number, afterSeq: number): Promise<StoredEvent[] | undefined> {
    const entries = await this.#redis.xrange(this.#key(sessionId, stream), '-', '+').catch(() => {
      throw new GatewayError('SWB_STORE_UNAVAILABLE', 'the event log is unreachable; retry shortly');
    });
    if (entries.length === 0) return undefined;
    const out: StoredEvent[] = [];
    for (const [, fields] of entries) {
      const seq = Number(fields[fields.indexOf('s') + 1]);
      if (seq > afterSeq) out.push({ seq, data: fields[fields.indexOf('d') + 1]! });
    }
    return out;
  }

  /** The last sequence number logged on a stream, so a new owner continues numbering after it. */
  async lastSeq(sessionId: string, stream: number): Promise<number> {
    const last = await this.#redis.xrevrange(this.#key(sessionId, stream), '+', '-', 'COUNT', 1);
    const fields = last[0]?.[1];
    return fields ? Number(fields[fields.indexOf('s') + 1]) : 0;
  }

  dropStream(sessionId: string, stream: number): void {
    this.#redis.del(this.#key(sessionId, stream)).catch(() => {});
  }

  /** The session ended on this replica: its log goes, unless another replica owns the session by now. */
  dropSession(sessionId: string): void {
    // EVAL, not by SHA: not awaited, and the session's record is removed by the command sent after it.
    this.#redis.eval(DROP_SESSION, 2, this.#owner.key(sessionId), `${this.#prefix}evs:${sessionId}`, this.#owner.me, `${this.#prefix}ev:${sessionId}:`).catch(() => {});
  }
}
