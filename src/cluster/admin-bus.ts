import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { parseChannelObject } from './channel-message.js';

/**
 * A message on the admin channels: "end this session" from another replica's admin API, and its answer;
 * a question to every replica ("your upstreams"), on the channel all of them hear, and each one's answer.
 */
type AdminMessage =
  | { t: 'end'; id: string; from: string; session: string }
  | { t: 'ended'; id: string; ended: boolean }
  | { t: 'ask'; id: string; from: string; what: string; arg?: unknown }
  | { t: 'answer'; id: string; replica: string; value?: unknown; error?: string };

/** What a replica answers when the others ask it (its upstreams, its tenants' usage, a reload of its own file). */
export type AdminAnswerer = (what: string, arg: unknown) => Promise<unknown>;

/** Every other replica's answer by replica id; `unanswered`: how many took the question and did not answer in time. */
export interface ClusterAnswers {
  answers: Map<string, { value?: unknown; error?: string }>;
  unanswered: number;
}

/** The owner did not take the message (no subscriber on its channel): it is gone, whatever its heartbeat says. */
export const UNREACHABLE = 'unreachable';

/**
 * The owner took the message (its subscriber is there, its heartbeat current) and did not answer in
 * time: frozen (SIGSTOP, a stalled VM) or overloaded. The record is not removed here: the owner still
 * holds the session, and the message waits in its connection, so it ends the session if it runs again.
 * `status` 504 and `code` let the admin API answer it as what it is rather than as a 500.
 */
export class ReplicaTimeout extends Error {
  readonly status = 504;
  readonly code = 'replica_timeout';
  readonly replica: string;

  constructor(replica: string, message: string) {
    super(message);
    this.name = 'ReplicaTimeout';
    this.replica = replica;
  }
}

export interface AdminBusOptions {
  pub: Redis;
  sub: Redis;
  prefix: string;
  me: string;
  /** Ends a session this replica holds; false when it holds no such session. */
  end: (session: string) => Promise<boolean>;
  /** A message on the channel that is not one of ours: ignored, and counted here. */
  malformed: () => void;
}

function parse(text: string): AdminMessage | undefined {
  const m = parseChannelObject(text);
  if (!m) return undefined;
  if (typeof m.id !== 'string') return undefined;
  if (m.t === 'end' && typeof m.from === 'string' && typeof m.session === 'string') return m as AdminMessage;
  if (m.t === 'ended' && typeof m.ended === 'boolean') return m as AdminMessage;
  if (m.t === 'ask' && typeof m.from === 'string' && typeof m.what === 'string') return m as AdminMessage;
  if (m.t === 'answer' && typeof m.replica === 'string' && (m.error === undefined || typeof m.error === 'string')) return m as AdminMessage;
  return undefined;
}

/**
 * Operator actions across replicas: the admin API of any replica can end a session another replica
 * holds. A channel of its own rather than the tunnel: the tunnel runs client requests through the
 * owner's MCP routes (with the client's principal), and an operator is not that client.
 */
export class AdminBus {
  readonly #o: AdminBusOptions;
  readonly #waiting = new Map<string, (ended: boolean) => void>();
  readonly #asking = new Map<string, (m: Extract<AdminMessage, { t: 'answer' }>) => void>();
  /** Set by the composition root once the admin target exists; until then questions get an error. */
  answerer: AdminAnswerer | undefined;

  constructor(o: AdminBusOptions) {
    this.#o = o;
  }

  static channel(prefix: string, replica: string): string {
    return `${prefix}admin:${replica}`;
  }

  /** The channel every replica hears: questions to all of them. */
  static everyone(prefix: string): string {
    return `${prefix}admin-all`;
  }

  async start(): Promise<void> {
    const mine = AdminBus.channel(this.#o.prefix, this.#o.me);
    const all = AdminBus.everyone(this.#o.prefix);
    this.#o.sub.on('message', (channel: string, text: string) => {
      if (channel !== mine && channel !== all) return;
      const m = parse(text);
      if (!m) this.#o.malformed();
      else if (m.t === 'ended') this.#waiting.get(m.id)?.(m.ended);
      else if (m.t === 'answer') this.#asking.get(m.id)?.(m);
      else if (m.t === 'ask') {
        if (m.from !== this.#o.me) void this.#answer(m);
      } else void this.#serve(m);
    });
    await this.#o.sub.subscribe(mine, all);
  }

  async #answer(m: Extract<AdminMessage, { t: 'ask' }>): Promise<void> {
    let answer: AdminMessage;
    try {
      if (!this.answerer) throw new Error('this replica cannot answer admin questions yet');
      answer = { t: 'answer', id: m.id, replica: this.#o.me, value: await this.answerer(m.what, m.arg) };
    } catch (err) {
      answer = { t: 'answer', id: m.id, replica: this.#o.me, error: (err as Error).message };
    }
    await this.#o.pub.publish(AdminBus.channel(this.#o.prefix, m.from), JSON.stringify(answer)).catch(() => {});
  }

  /**
   * Asks every other replica `what`, and waits (at most timeoutMs) for each one that took the question
   * (Redis says how many subscribers received it) to answer.
   */
  async askAll(what: string, arg: unknown, timeoutMs: number): Promise<ClusterAnswers> {
    const id = randomUUID();
    const answers = new Map<string, { value?: unknown; error?: string }>();
    let expected = Number.POSITIVE_INFINITY;
    let done!: () => void;
    const complete = new Promise<void>((resolve) => (done = resolve));
    this.#asking.set(id, (m) => {
      answers.set(m.replica, m.error === undefined ? { value: m.value } : { error: m.error });
      if (answers.size >= expected) done();
    });
    const timer = setTimeout(done, timeoutMs);
    try {
      const message: AdminMessage = { t: 'ask', id, from: this.#o.me, what, arg };
      // This replica hears its own question too and does not answer it.
      expected = (await this.#o.pub.publish(AdminBus.everyone(this.#o.prefix), JSON.stringify(message))) - 1;
      if (answers.size >= expected) done();
      await complete;
      return { answers: new Map(answers), unanswered: Math.max(0, expected - answers.size) };
    } finally {
      clearTimeout(timer);
      this.#asking.delete(id);
    }
  }

  async #serve(m: Extract<AdminMessage, { t: 'end' }>): Promise<void> {
    const ended = await this.#o.end(m.session).catch(() => false);
    const answer: AdminMessage = { t: 'ended', id: m.id, ended };
    await this.#o.pub.publish(AdminBus.channel(this.#o.prefix, m.from), JSON.stringify(answer)).catch(() => {});
  }

  /**
   * Asks `owner` to end `session`: true when it did, false when it holds no such session, UNREACHABLE
   * when nothing listens on its channel. Rejects with ReplicaTimeout when the owner takes the message but does not answer in time.
   */
  async end(owner: string, session: string, timeoutMs: number): Promise<boolean | typeof UNREACHABLE> {
    const id = randomUUID();
    const answered = new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        const hint = 'it has the request and ends the session when it runs again; see GET /sessions, and retry (once its heartbeat lapses, store.redis.replicaTtlMs, any replica removes the record)';
        reject(new ReplicaTimeout(owner, `replica ${owner} holds session ${session} and did not answer within ${timeoutMs} ms (frozen or overloaded?): not known to be ended; ${hint}`));
      }, timeoutMs);
      this.#waiting.set(id, (ended) => {
        clearTimeout(timer);
        this.#waiting.delete(id);
        resolve(ended);
      });
    });
    const message: AdminMessage = { t: 'end', id, from: this.#o.me, session };
    let receivers: number;
    try {
      receivers = await this.#o.pub.publish(AdminBus.channel(this.#o.prefix, owner), JSON.stringify(message));
    } catch (err) {
      // The wait is settled and handled here: left to its timer, its rejection had no handler and ended the process.
      this.#waiting.get(id)?.(false);
      await answered.catch(() => {});
      throw err;
    }
    if (receivers === 0) {
      this.#waiting.get(id)?.(false);
      await answered.catch(() => {});
      return UNREACHABLE;
    }
    return answered;
  }
}
