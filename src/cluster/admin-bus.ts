import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { parseChannelObject } from './channel-message.js';

/** A message on a replica's admin channel: "end this session" from another replica's admin API, and its answer. */
type AdminMessage = { t: 'end'; id: string; from: string; session: string } | { t: 'ended'; id: string; ended: boolean };

/** The owner did not take the message (no subscriber on its channel): it is gone, whatever its heartbeat says. */
export const UNREACHABLE = 'unreachable';

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

  constructor(o: AdminBusOptions) {
    this.#o = o;
  }

  static channel(prefix: string, replica: string): string {
    return `${prefix}admin:${replica}`;
  }

  async start(): Promise<void> {
    const mine = AdminBus.channel(this.#o.prefix, this.#o.me);
    this.#o.sub.on('message', (channel: string, text: string) => {
      if (channel !== mine) return;
      const m = parse(text);
      if (!m) this.#o.malformed();
      else if (m.t === 'ended') this.#waiting.get(m.id)?.(m.ended);
      else void this.#serve(m);
    });
    await this.#o.sub.subscribe(mine);
  }

  async #serve(m: Extract<AdminMessage, { t: 'end' }>): Promise<void> {
    const ended = await this.#o.end(m.session).catch(() => false);
    const answer: AdminMessage = { t: 'ended', id: m.id, ended };
    await this.#o.pub.publish(AdminBus.channel(this.#o.prefix, m.from), JSON.stringify(answer)).catch(() => {});
  }

  /**
   * Asks `owner` to end `session`: true when it did, false when it holds no such session, UNREACHABLE
   * when nothing listens on its channel. Rejects when the owner takes the message but does not answer in time.
   */
  async end(owner: string, session: string, timeoutMs: number): Promise<boolean | typeof UNREACHABLE> {
    const id = randomUUID();
    const answered = new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        reject(new Error(`replica ${owner} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.set(id, (ended) => {
        clearTimeout(timer);
        this.#waiting.delete(id);
        resolve(ended);
      });
    });
    const message: AdminMessage = { t: 'end', id, from: this.#o.me, session };
    const receivers = await this.#o.pub.publish(AdminBus.channel(this.#o.prefix, owner), JSON.stringify(message));
    if (receivers === 0) {
      this.#waiting.get(id)?.(false);
      await answered.catch(() => {});
      return UNREACHABLE;
    }
    return answered;
  }
}
