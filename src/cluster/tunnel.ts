import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/** Runs a request through this replica's own routes and streams the response (Fastify's inject). */
export type LocalDispatch = (r: TunnelRequest, signal: AbortSignal) => Promise<{ status: number; headers: Record<string, string | string[]>; body: NodeJS.ReadableStream }>;

export interface TunnelRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

type Frame =
  | { t: 'req'; id: string; from: string; req: TunnelRequest }
  | { t: 'abort'; id: string }
  | { t: 'head'; id: string; status: number; headers: Record<string, string | string[]> }
  | { t: 'data'; id: string; chunk: string }
  | { t: 'end'; id: string };

export const FORWARDED_HEADER = 'x-switchboard-forwarded';
/** How often a forwarded request nobody received is offered again. */
const REOFFER_MS = 100;
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/**
 * HTTP over Redis between replicas: a replica that receives a request for a session another replica
 * owns publishes it to the owner's inbox; the owner runs it through its own routes, exactly as if the
 * client had come straight to it, and streams the response back frame by frame. SSE streams, JSON
 * answers, 202s and errors all cross the same way, and the edge logic exists once.
 */
export class Tunnel {
  readonly #pub: Redis;
  readonly #sub: Redis;
  readonly #prefix: string;
  readonly #me: string;
  readonly #logger: Logger;
  readonly #dispatch: LocalDispatch;
  readonly #waiting = new Map<string, { res: ServerResponse; owner: string; timer: NodeJS.Timeout | undefined }>();
  readonly #serving = new Map<string, AbortController>();

  constructor(pub: Redis, sub: Redis, prefix: string, me: string, logger: Logger, dispatch: LocalDispatch) {
    this.#pub = pub;
    this.#sub = sub;
    this.#prefix = prefix;
    this.#me = me;
    this.#logger = logger;
    this.#dispatch = dispatch;
  }

  #inbox(replica: string): string {
    return `${this.#prefix}inbox:${replica}`;
  }

  async start(): Promise<void> {
    const inbox = this.#inbox(this.#me);
    // The subscriber connection may carry other channels too (the change bus): frames come on the inbox only.
    this.#sub.on('message', (channel: string, text: string) => channel === inbox && this.#onFrame(JSON.parse(text) as Frame));
    this.#sub.on('close', () => this.#lost());
    await this.#sub.subscribe(inbox);
  }

  /**
   * The connection that carries frames dropped (Redis went away): frames in flight are lost, so no relay
   * in either direction can complete. Each ends now rather than hanging: a waiting client gets a 503 (or
   * the end of its stream, and reconnects), and a forwarded request served here is let go (its stream
   * unbound, so the client's next GET is not refused as a second stream).
   */
  #lost(): void {
    for (const ac of this.#serving.values()) ac.abort();
    for (const id of [...this.#waiting.keys()]) this.#unanswered(id, 'the link to the replica that owns this session was lost; retry');
  }

  /** Whether `replica` receives forwarded requests right now (its inbox has a subscriber). */
  async listening(replica: string): Promise<boolean> {
    const [, subscribers] = (await this.#pub.pubsub('NUMSUB', this.#inbox(replica))) as [string, number | string];
    return Number(subscribers) > 0;
  }

  #send(replica: string, frame: Frame): void {
    this.#pub.publish(this.#inbox(replica), JSON.stringify(frame)).catch((err: Error) => this.#logger.warn({ err: err.message }, 'tunnel publish failed'));
  }

  /** Forwards a request to its owner and relays the answer on `res`; a silent owner gets a 503. */
  forward(owner: string, method: string, url: string, headers: Record<string, string | string[] | undefined>, body: string | undefined, res: ServerResponse, timeoutMs: number): void {
    const id = randomUUID();
    const plain: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) plain[k] = Array.isArray(v) ? v.join(', ') : v;
    plain[FORWARDED_HEADER] = this.#me;
    const timer = setTimeout(() => this.#unanswered(id, 'the replica that owns this session did not answer; retry'), timeoutMs);
    this.#waiting.set(id, { res, owner, timer });
    // The client left: close the owner's side too (for Streamable HTTP that is not a cancellation).
    res.once('close', () => {
      if (this.#waiting.delete(id)) this.#send(owner, { t: 'abort', id });
    });
    const frame = JSON.stringify({ t: 'req', id, from: this.#me, req: { method, url, headers: plain, body } } satisfies Frame);
    // Nobody received it (the owner's subscription is not back yet after an outage, or the owner just
    // died): offered again until the forward timeout. Redis away: a 503 now, not after the timeout.
    const offer = (): void => {
      if (!this.#waiting.has(id)) return;
      this.#pub.publish(this.#inbox(owner), frame).then(
        (listeners) => {
          if (listeners === 0) setTimeout(offer, REOFFER_MS).unref();
        },
        () => this.#unanswered(id, 'the tunnel to the replica that owns this session is down (session store unreachable); retry shortly'),
      );
    };
    offer();
  }

  /** A forwarded request that will get no answer from its owner: 503 with Retry-After, if nothing was relayed yet. */
  #unanswered(id: string, message: string): void {
    const w = this.#waiting.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    this.#waiting.delete(id);
    if (!w.res.headersSent) {
      w.res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }));
    } else {
      w.res.end();
    }
  }

  #onFrame(f: Frame): void {
    if (f.t === 'req') {
      void this.#serve(f.id, f.from, f.req);
      return;
    }
    if (f.t === 'abort') {
      this.#serving.get(f.id)?.abort();
      return;
    }
    const w = this.#waiting.get(f.id);
    if (!w) return;
    if (f.t === 'head') {
      clearTimeout(w.timer);
      w.timer = undefined;
      const headers = { ...f.headers };
      delete headers['content-length'];
      delete headers['transfer-encoding'];
      delete headers.connection;
      w.res.writeHead(f.status, headers);
      w.res.flushHeaders();
    } else if (f.t === 'data') {
      w.res.write(f.chunk);
    } else if (f.t === 'end') {
      this.#waiting.delete(f.id);
      w.res.end();
    }
  }

  async #serve(id: string, from: string, req: TunnelRequest): Promise<void> {
    const ac = new AbortController();
    this.#serving.set(id, ac);
    try {
      const r = await this.#dispatch(req, ac.signal);
      this.#send(from, { t: 'head', id, status: r.status, headers: r.headers });
      const decoder = new StringDecoder('utf8');
      for await (const chunk of r.body) {
        const text = typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
        if (text) this.#send(from, { t: 'data', id, chunk: text });
      }
      const rest = decoder.end();
      if (rest) this.#send(from, { t: 'data', id, chunk: rest });
    } catch (err) {
      if (!ac.signal.aborted) this.#logger.debug({ err: (err as Error).message }, 'forwarded request ended early');
    } finally {
      this.#serving.delete(id);
      this.#send(from, { t: 'end', id });
    }
  }

  /** Ends every relay in both directions (shutdown). */
  close(): void {
    for (const ac of this.#serving.values()) ac.abort();
    for (const [id, w] of this.#waiting) {
      clearTimeout(w.timer);
      this.#waiting.delete(id);
      w.res.end();
    }
  }
}
