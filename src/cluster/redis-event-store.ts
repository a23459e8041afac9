import type { Redis } from 'ioredis';
import { GatewayError } from '../errors.js';
import type { EventBounds, EventStore, StoredEvent } from '../session/event-store.js';
import type { Logger } from '../observability/logger.js';

// Drops a session's log only while no other replica owns the session: the copy of one that ended on a
// replica after another took it over (paused past its heartbeat, then idle, or a DELETE it served) must
// not take the new owner's log with it, whose client resumes from it. Released ('') counts as another's:
// the replica that takes it over replays from it.
const DROP_SESSION = `
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
for _, s in ipairs(redis.call('SMEMBERS', KEYS[2])) do redis.call('DEL', ARGV[2] .. s) end
redis.call('DEL', KEYS[2], KEYS[3])
return 1`;

// One stream's log out, with its bytes out of the session's count (KEYS: the stream, the index, the sizes).
const DROP_STREAM = `
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
local size = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if size > 0 then redis.call('HINCRBY', KEYS[3], 't', -size) end
redis.call('HDEL', KEYS[3], ARGV[1])
return 1`;

// Logs one event, unless another replica owns the session by now: a copy that has not yet learned it
// was taken over (paused past its heartbeat) numbers its standalone stream on from where it was, as the
// new owner does from the log (continueFrom), so its events would share their ids with the new owner's
// (a resume after one would skip the other's, or replay the stale copy's). Checked in the same script as
// the append, so an append lands either before a claim (the new owner's numbering counts it) or not at
// all. No owner yet (a session still opening) or any more (the store lost it) logs as before.
// replicate_commands: XADD '*' is not deterministic; Redis before 7 refuses writes after it otherwise.
// The session's bytes are counted per stream (KEYS[4], with the total in 't'): over the budget (ARGV[7]),
// whole streams go, the oldest request stream first, the standalone one (0) only when no other is left,
// never the one appended to: as the memory log does, so that a client that takes large answers and drops
// its connections cannot fill Redis for sessionTtlMs. Events trimmed by count (ARGV[2] per stream, exactly)
// give their bytes back: counted for ever (approximate trimming, MAXLEN ~), a GET stream that had carried
// the budget's worth of notifications over a session's life (holding only its last few) made every later
// append drop the session's other streams, answers logged for a reader that dropped included. Still over
// with no other stream left, the appended stream's own oldest events go (the new one too when it alone is
// larger, as in memory): before, one stream of eventsPerStream large events held that many, whatever the budget.
const APPEND = `
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
if redis.replicate_commands then redis.replicate_commands() end
local n = string.len(ARGV[4])
local over = redis.call('XLEN', KEYS[2]) + 1 - tonumber(ARGV[2])
if over > 0 then
  for _, e in ipairs(redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', over)) do
    local f = e[2]
    for i = 1, #f, 2 do if f[i] == 'd' then n = n - string.len(f[i + 1]) end end
  end
end
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[2], '*', 's', ARGV[3], 'd', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[5])
redis.call('HINCRBY', KEYS[4], ARGV[6], n)
local total = redis.call('HINCRBY', KEYS[4], 't', n)
redis.call('PEXPIRE', KEYS[4], ARGV[5])
local budget = tonumber(ARGV[7])
while total > budget do
  local oldest
  for _, f in ipairs(redis.call('HKEYS', KEYS[4])) do
    if f ~= 't' and f ~= ARGV[6] then
      local no = tonumber(f)
      if oldest == nil or (no ~= 0 and (oldest == 0 or no < oldest)) then oldest = no end
    end
  end
  if oldest == nil then break end
  local name = tostring(oldest)
  redis.call('DEL', ARGV[8] .. name)
  redis.call('SREM', KEYS[3], name)
  total = redis.call('HINCRBY', KEYS[4], 't', -tonumber(redis.call('HGET', KEYS[4], name)))
  redis.call('HDEL', KEYS[4], name)
end
local own = 0
while total > budget do
  local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
  if first == nil then break end
  for i = 1, #first[2], 2 do if first[2][i] == 'd' then own = own + string.len(first[2][i + 1]); total = total - string.len(first[2][i + 1]) end end
  redis.call('XDEL', KEYS[2], first[1])
end
if own > 0 then
  redis.call('HINCRBY', KEYS[4], 't', -own)
  if redis.call('XLEN', KEYS[2]) == 0 then
    redis.call('DEL', KEYS[2])
    redis.call('SREM', KEYS[3], ARGV[6])
    redis.call('HDEL', KEYS[4], ARGV[6])
  else
    redis.call('HINCRBY', KEYS[4], ARGV[6], -own)
  end
end
return 1`;

/**
 * Bytes of appends sent and not yet answered, at most (per replica). Redis answers in a millisecond, so
 * only one that takes commands and answers none (frozen, a partition that leaves the connection open)
 * comes near it: each append waits in ioredis's queue and the socket's buffer until it answers.
 */
export const APPENDS_WAITING_MAX_BYTES = 16 * 1024 * 1024;

/** The name APPEND is defined under on the store's connection (see RedisEventStore). */
const APPEND_COMMAND = 'swbEventAppend';
type Appending = Redis & Record<typeof APPEND_COMMAND, (...keysAndArgs: Array<string | number>) => Promise<unknown>>;

/**
 * The resumability log in Redis Streams, one stream per SSE stream, trimmed to about `perStream`
 * entries: any replica can replay a stream after Last-Event-ID. Appends are sent and not awaited (the
 * live write already went out), and only the session's owner's are logged (see APPEND); a lost append
 * costs only resumability of that event — which is what a Redis outage costs: the events sent while it
 * was away (or that it lost) cannot be replayed. A replay that cannot read the log fails with SWB_STORE_UNAVAILABLE (503: retry), not "unknown event".
 */
/** Whose sessions this replica's log may write and drop: this replica's id, and where the store keeps a session's owner. */
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
  readonly #bytesPerSession: number;
  readonly #logger: Logger | undefined;
  /** Bytes (string lengths, near enough) of appends Redis has not answered yet (see APPENDS_WAITING_MAX_BYTES). */
  #waiting = 0;
  /** Bytes of appends that timed out and are still in ioredis's queue (see #holdUntilDrained). */
  #unanswered = 0;
  #drainWatch: NodeJS.Timeout | undefined;
  #skipping = false;

  constructor(redis: Redis, prefix: string, bounds: EventBounds, ttlMs: number, owner: SessionOwner, logger?: Logger) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#perStream = bounds.perStream;
    this.#bytesPerSession = bounds.bytesPerSession;
    this.#ttlMs = ttlMs;
    this.#owner = owner;
    this.#logger = logger;
    // A command, so ioredis sends APPEND's text once per connection (EVAL) and its SHA from then on: a
    // logged event carries its data, not the script's text as well.
    redis.defineCommand(APPEND_COMMAND, { numberOfKeys: 4, lua: APPEND });
  }

  #key(sessionId: string, stream: number): string {
    return `${this.#prefix}ev:${sessionId}:${stream}`;
  }

  append(sessionId: string, stream: number, seq: number, data: string): void {
    if (this.#perStream === 0) return;
    // Not awaited, and a stream's appends must reach Redis in the order they were sent: they do, since the
    // SHA goes only to a connection that has run the text. A SCRIPT FLUSH on a live connection is the one
    // exception: an append refused NOSCRIPT is sent again (as EVAL), and one sent meanwhile may overtake it.
    if (!this.#admit(data.length)) return;
    const keys = [this.#owner.key(sessionId), this.#key(sessionId, stream), `${this.#prefix}evs:${sessionId}`, `${this.#prefix}evb:${sessionId}`];
    const args = [this.#owner.me, this.#perStream, seq, data, this.#ttlMs, stream, this.#bytesPerSession, `${this.#prefix}ev:${sessionId}:`];
    const n = data.length;
    (this.#redis as Appending)[APPEND_COMMAND](...keys, ...args).then(
      () => (this.#waiting -= n),
      (err: Error) => {
        this.#waiting -= n;
        if (err.message === 'Command timed out') this.#holdUntilDrained(n);
      },
    );
  }

  /**
   * An append ioredis stopped waiting for (its commandTimeout) is still in its queue, data and all, until
   * Redis answers or the connection closes: counted until that queue is empty, or a Redis frozen for longer
   * than the timeout would have the bound let through all it was meant to hold back.
   */
  #holdUntilDrained(n: number): void {
    this.#unanswered += n;
    this.#drainWatch ??= setInterval(() => {
      if (this.#redis.commandQueue.length > 0) return;
      this.#unanswered = 0;
      clearInterval(this.#drainWatch);
      this.#drainWatch = undefined;
    }, 100).unref();
  }

  /**
   * Whether an append of `n` bytes is sent: not while those waiting for Redis's answer would pass the
   * bound (one alone always goes). Not sent, the event cannot be replayed, as one sent while Redis is away.
   * Before this bound the owner of a busy session kept every event it sent while Redis was frozen.
   */
  #admit(n: number): boolean {
    const held = this.#waiting + this.#unanswered;
    if (held > 0 && held + n > APPENDS_WAITING_MAX_BYTES) {
      if (!this.#skipping) this.#logger?.warn({ waitingBytes: held }, 'redis is not answering the event log\'s appends: events are not logged (not replayable after Last-Event-ID) until it does');
      this.#skipping = true;
      return false;
    }
    if (this.#skipping && held === 0) this.#logger?.info('redis answers the event log\'s appends again: events are logged');
    if (held === 0) this.#skipping = false;
    this.#waiting += n;
    return true;
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

  /** The highest stream number in the session's index: the streams whose events the log still holds. */
  async lastStream(sessionId: string): Promise<number> {
    return (await this.#redis.smembers(`${this.#prefix}evs:${sessionId}`)).reduce((max, no) => Math.max(max, Number(no) || 0), 0);
  }

  dropStream(sessionId: string, stream: number): void {
    // Out of the session's index too: a session that lives for hours logs a stream per request whose
    // reader dropped, and its index (refreshed by every append) grew by one name each, for as long as the
    // session lived, all of them deleted one by one in the script that ends the session.
    this.#redis.eval(DROP_STREAM, 3, this.#key(sessionId, stream), `${this.#prefix}evs:${sessionId}`, `${this.#prefix}evb:${sessionId}`, String(stream)).catch(() => {});
  }

  /** The session ended on this replica: its log goes, unless another replica owns the session by now. */
  dropSession(sessionId: string): void {
    // EVAL, not by SHA: not awaited, and the session's record is removed by the command sent after it.
    this.#redis.eval(DROP_SESSION, 3, this.#owner.key(sessionId), `${this.#prefix}evs:${sessionId}`, `${this.#prefix}evb:${sessionId}`, this.#owner.me, `${this.#prefix}ev:${sessionId}:`).catch(() => {});
  }
}
