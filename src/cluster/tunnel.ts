import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import { RecentIds } from './recent-ids.js';
import { ReplicaDeaths } from './replica-deaths.js';
import { replayable } from './replayable.js';
import { watchSilence } from './silence-watch.js';
import { parseFrame, withoutFraming, type Frame, type TunnelRequest } from './tunnel-frame.js';
import { replyUnavailable } from './unavailable-reply.js';

export type { TunnelRequest } from './tunnel-frame.js';

/** Runs a request through this replica's own routes and streams the response (Fastify's inject). */
export type LocalDispatch = (r: TunnelRequest, signal: AbortSignal) => Promise<{ status: number; headers: Record<string, string | string[]>; body: NodeJS.ReadableStream }>;

/** A request as the edge has it (Node's header values), to forward. */
export type IncomingForward = Omit<TunnelRequest, 'headers'> & { headers: Record<string, string | string[] | undefined> };

export const FORWARDED_HEADER = 'x-switchboard-forwarded';
/** The answer to a request its session's owner took and whose answer is lost, when it is not harmless twice. */
export const SILENT_HOLDER = 'the replica that owns this session took this request and its answer is lost (it stopped answering, or the link back failed): it may have taken effect, or take effect when that replica resumes: not retried; send it again if that is safe';
/** The answer to a request its session's owner took when the replica relaying it stops, when it is not harmless twice. */
const STOPPED_HOLDER = 'the gateway replica relaying this request to the one that owns its session is shutting down: its answer is lost, and it may have taken effect there: not retried; send it again if that is safe';
/** The answer to a request whose publish Redis did not confirm (it may have delivered it), when it is not harmless twice. */
const UNCONFIRMED = 'the session store did not confirm that this request reached the replica that owns this session: it may have, and may have taken effect there: not retried; send it again if that is safe';
const TUNNEL_DOWN = 'the tunnel to the replica that owns this session is down (session store unreachable); retry shortly';
/** How often a forwarded request nobody received is offered again. */
const REOFFER_MS = 100;
/** How often, while forwards wait on owners, the owners are checked for being gone. */
const WATCH_MS = 250;
/** Headers of one hop, not carried. Host is carried: the owner runs the request through its own routes, whose Host guard (server.allowedHosts) and challenge URLs must see what the client sent, as over HTTP. */
const HOP_BY_HOP = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** What became of a forward: relayed (the response is the owner's, or an error), or not sent since the owner is gone. */
export type ForwardOutcome = 'relayed' | 'owner-gone';

export interface TunnelOptions {
  pub: Redis;
  sub: Redis;
  prefix: string;
  me: string;
  logger: Logger;
  dispatch: LocalDispatch;
  /** Which of these replicas are gone (an empty set when that cannot be known now). */
  gone: (replicas: readonly string[]) => Promise<Set<string>>;
  /** A message on the inbox that is not a frame: ignored, and counted here. */
  malformed: () => void;
  /** server.maxStreamBufferBytes: the most a relayed response may hold for a client that does not read. */
  maxBufferBytes: number;
}

interface Waiting {
  res: ServerResponse;
  owner: string;
  req: TunnelRequest;
  /** Stops the watch that gives up on a silent owner (see watchSilence); undefined once its answer began. */
  stopWatch: (() => void) | undefined;
  /** Some publish of it reached the owner's inbox: the owner may have run it. */
  received: boolean;
  /** The number of the owner's next frame of the answer: one below it came again (see #onFrame). */
  next: number;
  /** A re-offer's publish is on its way (unconfirmed): the owner may get it whatever is decided here meanwhile. */
  offering: boolean;
}

/**
 * HTTP over Redis between replicas, the fallback of forwarding over HTTP (see Forwarder): used for an
 * owner that advertises no URL (an older version during a rolling upgrade) or cannot be reached at it.
 * A replica that receives a request for a session another replica owns publishes it to the owner's inbox; the owner runs it through its own routes, exactly as if the
 * client had come straight to it, and streams the response back frame by frame. SSE streams, JSON
 * answers, 202s and errors all cross the same way, and the edge logic exists once.
 *
 * An owner that is gone (see ReplicaDeaths) is noticed at once instead of after the forward timeout: a
 * request it never received is not sent (the caller takes the session over), and one it received before
 * dying is run here when running it twice is harmless (see replayable) — otherwise it fails, never replayed.
 */
export class Tunnel {
  readonly #o: TunnelOptions;
  /**
   * What marks a request as forwarded when it runs through this replica's routes: set here on every
   * request taken off the inbox, random per process, so a client that sends the header itself is not
   * believed (a forwarded request is never forwarded again, and takes the session over from its owner).
   */
  readonly mark = randomUUID();
  readonly #waiting = new Map<string, Waiting>();
  readonly #serving = new Map<string, AbortController>();
  /** Requests taken off the inbox lately: ioredis resends a PUBLISH whose reply a dropped link lost, and one came (and ran) twice. */
  readonly #taken = new RecentIds(10_000);
  /** Frames for forwards whose publish is not confirmed yet (the answer may beat the publish's reply). */
  readonly #pending = new Map<string, Frame[]>();
  /** Counts losses of the frame connection, so a forward published across one knows its frames are gone. */
  #losses = 0;
  #watch: NodeJS.Timeout | undefined;

  constructor(o: TunnelOptions) {
    this.#o = o;
  }

  /** Forwards relayed from here that still wait on their owners' answers (a test's look at churn). */
  get relaying(): number {
    return this.#waiting.size + this.#pending.size;
  }

  #inbox(replica: string): string {
    return ReplicaDeaths.inbox(this.#o.prefix, replica);
  }

  async start(): Promise<void> {
    const inbox = this.#inbox(this.#o.me);
    // The subscriber connection may carry other channels too (the change bus): frames come on the inbox only.
    this.#o.sub.on('message', (channel: string, text: string) => {
      if (channel !== inbox) return;
      const frame = parseFrame(text);
      if (frame) this.#onFrame(frame);
      else this.#o.malformed();
    });
    this.#o.sub.on('close', () => this.#lost());
    await this.#o.sub.subscribe(inbox);
  }

  /**
   * The connection that carries frames dropped (Redis went away): frames in flight are lost, so no relay in either direction can complete. Each ends now
   * rather than hanging: a waiting client gets a 503 (or the end of its stream, and reconnects), and a forwarded request served here is let go (its
   * stream unbound, so the client's next GET is not refused as a second stream).
   */
  #lost(): void {
    this.#losses++;
    for (const ac of this.#serving.values()) ac.abort();
    for (const id of [...this.#waiting.keys()]) this.#heldUnanswered(id, 'the link to the replica that owns this session was lost; retry');
  }

  /** Whether `replica` receives forwarded requests right now (its inbox has a subscriber). */
  async listening(replica: string): Promise<boolean> {
    const [, subscribers] = (await this.#o.pub.pubsub('NUMSUB', this.#inbox(replica))) as [string, number | string];
    return Number(subscribers) > 0;
  }

  /** `unheard`: called when the frame reached no one (the replica's inbox has no subscriber: it is gone). */
  #send(replica: string, frame: Frame, unheard?: () => void): void {
    this.#o.pub
      .publish(this.#inbox(replica), JSON.stringify(frame))
      .then((receivers) => receivers === 0 && unheard?.())
      .catch((err: Error) => this.#o.logger.warn({ err: err.message }, 'tunnel publish failed'));
  }

  /**
   * Forwards a request to its owner and relays the answer on the response `open` gives (called only when
   * the request goes out); a silent owner gets a 503. 'owner-gone': nothing was sent nor answered.
   */
  async forward(owner: string, req: IncomingForward, open: () => ServerResponse, timeoutMs: number, alive: () => Promise<boolean>): Promise<ForwardOutcome> {
    const id = randomUUID();
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    headers[FORWARDED_HEADER] = this.#o.me;
    const plain: TunnelRequest = { ...req, headers };
    const frame = JSON.stringify({ t: 'req', id, from: this.#o.me, req: plain } satisfies Frame);
    // The answer comes back on this replica's inbox: while that link is down (or not subscribed again
    // yet) a forward would run on the owner with its answer published to no one.
    // The command link down too: no offline queue (connectRedis), so a publish now would certainly not go out.
    if (this.#o.sub.status !== 'ready' || this.#o.pub.status !== 'ready') {
      replyUnavailable(open(), req.body, 'the link to the replica that owns this session is down (session store unreachable); retry shortly');
      return 'relayed';
    }
    // Registered before the publish: the owner's answer comes on another connection and may arrive first.
    this.#pending.set(id, []);
    const losses = this.#losses;
    let listeners: number;
    try {
      listeners = await this.#o.pub.publish(this.#inbox(owner), frame);
      if (listeners === 0 && (await this.#o.gone([owner])).has(owner)) {
        this.#pending.delete(id);
        return 'owner-gone';
      }
    } catch {
      // Unconfirmed (timed out, or the link dropped with it in flight) is not unsent: Redis may have delivered
      // it, or will once it answers again, and the owner run it. Before 2026-12-07 a tools/call was invited back.
      this.#pending.delete(id);
      this.#send(owner, { t: 'abort', id }); // on the same connection: it never overtakes the request
      if (replayable(plain.method, plain.body)) replyUnavailable(open(), plain.body, TUNNEL_DOWN);
      else replyUnavailable(open(), plain.body, UNCONFIRMED, false);
      return 'relayed';
    }
    const early = this.#pending.get(id) ?? [];
    this.#pending.delete(id); // no frame comes in between (no await until the forward waits)
    const res = open();
    // The client left during the publish: its 'close' fired already, never again; the owner served its stream for no one for ever (before 2026-12-08).
    if (res.destroyed || res.socket?.destroyed === true) {
      this.#send(owner, { t: 'abort', id });
      return 'relayed';
    }
    // A live owner slow to start its answer is waited for; only a silent one is given up on (see watchSilence),
    // and one that never received the forward (offered again meanwhile) after timeoutMs, as before.
    const received = async () => this.#waiting.get(id)?.received === true && (await alive());
    const stopWatch = watchSilence(timeoutMs, received, () => this.#heldUnanswered(id, 'the replica that owns this session did not answer; retry'));
    this.#waiting.set(id, { res, owner, req: plain, stopWatch, received: listeners > 0, next: 0, offering: false });
    this.#watchOwners();
    for (const f of early) this.#onFrame(f);
    if (losses !== this.#losses) this.#heldUnanswered(id, 'the link to the replica that owns this session was lost; retry');
    // The client left: close the owner's side too (for Streamable HTTP that is not a cancellation).
    res.once('close', () => {
      if (this.#forget(id)) this.#send(owner, { t: 'abort', id });
    });
    if (listeners === 0) this.#reoffer(id, owner, frame);
    return 'relayed';
  }

  /**
   * A forward nobody received (the owner's subscription is not back yet after an outage): offered again
   * until someone does, the forward times out, or the owner is found gone. Redis away: a 503 now.
   */
  #reoffer(id: string, owner: string, frame: string): void {
    const offer = (): void => {
      const w = this.#waiting.get(id);
      if (!w || w.received) return;
      w.offering = true;
      this.#o.pub.publish(this.#inbox(owner), frame).then(
        (n) => {
          w.offering = false;
          if (n > 0) w.received = true;
          else setTimeout(offer, REOFFER_MS).unref();
        },
        () => this.#heldUnanswered(id, TUNNEL_DOWN), // unconfirmed, not unsent (see forward): still offering
      );
    };
    setTimeout(offer, REOFFER_MS).unref();
  }

  /** While forwards wait, their owners are checked every WATCH_MS: one that died hands its forwards back. */
  #watchOwners(): void {
    if (this.#watch) return;
    this.#watch = setInterval(() => {
      if (this.#waiting.size === 0) {
        clearInterval(this.#watch);
        this.#watch = undefined;
        return;
      }
      const owners = [...new Set([...this.#waiting.values()].map((w) => w.owner))];
      void this.#o.gone(owners).then((dead) => {
        if (dead.size === 0) return;
        for (const [id, w] of [...this.#waiting]) if (dead.has(w.owner)) this.#ownerDied(id, w);
      });
    }, WATCH_MS);
    this.#watch.unref();
  }

  /**
   * The owner died with this forward: a request it never received, or one that is safe twice, is run
   * here (this replica takes the session over); a stream already relayed ends (the client reconnects);
   * anything else fails, since it may have taken effect.
   */
  #ownerDied(id: string, w: Waiting): void {
    this.#forget(id);
    if (w.res.headersSent) {
      w.res.end();
    } else if (!w.received || replayable(w.req.method, w.req.body)) {
      void this.#runHere(w.req, w.res);
    } else {
      replyUnavailable(w.res, w.req.body, 'the replica that owned this session died while handling this request, which may have taken effect: not retried; send it again if that is safe', false);
    }
  }

  /** Runs a forwarded request through this replica's own routes (it takes the session over) onto `res`. */
  async #runHere(req: TunnelRequest, res: ServerResponse): Promise<void> {
    const ac = new AbortController();
    res.once('close', () => ac.abort());
    try {
      const r = await this.#o.dispatch({ ...req, headers: { ...req.headers, [FORWARDED_HEADER]: this.mark } }, ac.signal);
      res.writeHead(r.status, withoutFraming(r.headers));
      res.flushHeaders();
      await pipeline(r.body, res);
    } catch (err) {
      if (ac.signal.aborted) return;
      this.#o.logger.debug({ err: (err as Error).message }, 'a request taken back from a dead owner ended early');
      if (res.headersSent) res.end();
      else replyUnavailable(res, req.body, 'the replica that owned this session died; retry');
    }
  }

  /**
   * A forward given up on: its owner fell silent (heartbeat lapsed), or the link its answer comes back on
   * was lost. One the owner took (it runs it, or a frozen one will when it wakes) is invited back only when
   * harmless twice, as when its owner dies with it; `retry` is the answer otherwise.
   */
  #heldUnanswered(id: string, retry: string): void {
    const w = this.#waiting.get(id);
    if (!w) return;
    // An offer on its way may reach the owner still (before 2026-12-07 given up on as never received).
    if (!(w.received || w.offering) || replayable(w.req.method, w.req.body) || w.res.headersSent) return this.#unanswered(id, retry);
    this.#forget(id);
    // Told to stop: a frozen owner reads it after the request when it wakes; a live one runs on for no one otherwise.
    this.#send(w.owner, { t: 'abort', id });
    replyUnavailable(w.res, w.req.body, w.received ? SILENT_HOLDER : UNCONFIRMED, false);
  }

  /** A forwarded request that will get no answer from its owner: 503 with Retry-After, if nothing was relayed yet. */
  #unanswered(id: string, message: string): void {
    const w = this.#waiting.get(id);
    if (!w) return;
    this.#forget(id);
    if (!w.res.headersSent) replyUnavailable(w.res, w.req.body, message);
    else w.res.end();
  }

  /** A forward no longer waited for: removed, its watch stopped (else it would ask after its owner for ever). */
  #forget(id: string): Waiting | undefined {
    const w = this.#waiting.get(id);
    this.#waiting.delete(id);
    w?.stopWatch?.();
    return w;
  }

  #onFrame(f: Frame): void {
    if (f.t === 'req') {
      if (this.#taken.first(f.id)) void this.#serve(f.id, f.from, f.req);
      return;
    }
    if (f.t === 'abort') {
      this.#serving.get(f.id)?.abort();
      return;
    }
    const w = this.#waiting.get(f.id);
    if (!w) {
      this.#pending.get(f.id)?.push(f);
      return;
    }
    // Delivered again (ioredis resends a PUBLISH whose reply the owner's dropped link lost): a head twice threw, data twice was relayed twice.
    if (f.n !== undefined && f.n < w.next) return;
    w.next = (f.n ?? w.next) + 1;
    if (f.t === 'head') {
      if (w.res.headersSent) return; // an owner of a version that does not number its frames
      w.stopWatch?.();
      w.stopWatch = undefined;
      w.res.writeHead(f.status, withoutFraming(f.headers));
      w.res.flushHeaders();
    } else if (f.t === 'data') {
      w.res.write(f.chunk);
      // The owner publishes its stream as it comes (no backpressure crosses Redis), so its own cut fires
      // only for bursts: a client that stops reading is cut here at the same bound (it reconnects with
      // Last-Event-ID), and the owner told to stop, as its own streams are.
      if (w.res.writableLength > this.#o.maxBufferBytes) {
        this.#forget(f.id);
        this.#send(w.owner, { t: 'abort', id: f.id });
        w.res.destroy();
      }
    } else if (f.t === 'end') {
      this.#forget(f.id);
      // Ended with no head: the owner's run failed or was cut before its answer began. Ended here as it is,
      // the client got an empty 200 for its request; it may have taken effect, so a retry is invited only when harmless.
      if (w.res.headersSent) w.res.end();
      else if (replayable(w.req.method, w.req.body)) replyUnavailable(w.res, w.req.body, 'the replica that owns this session ended this request without an answer; retry');
      else replyUnavailable(w.res, w.req.body, 'the replica that owns this session ended this request without an answer, and it may have taken effect: not retried; send it again if that is safe', false);
    }
  }

  async #serve(id: string, from: string, req: TunnelRequest): Promise<void> {
    const ac = new AbortController();
    this.#serving.set(id, ac);
    // The replica relaying it went away without a word (killed): a stream would be kept open for no one,
    // holding its session for ever. Noticed at the next frame nobody hears (a keep-alive at the latest).
    const gone = () => ac.abort();
    let n = 0;
    try {
      const r = await this.#o.dispatch({ ...req, headers: { ...req.headers, [FORWARDED_HEADER]: this.mark } }, ac.signal);
      this.#send(from, { t: 'head', id, n: n++, status: r.status, headers: r.headers }, gone);
      const decoder = new StringDecoder('utf8');
      for await (const chunk of r.body) {
        const text = typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer);
        if (text) this.#send(from, { t: 'data', id, n: n++, chunk: text }, gone);
      }
      const rest = decoder.end();
      if (rest) this.#send(from, { t: 'data', id, n: n++, chunk: rest });
    } catch (err) {
      if (!ac.signal.aborted) this.#o.logger.debug({ err: (err as Error).message }, 'forwarded request ended early');
    } finally {
      this.#serving.delete(id);
      this.#send(from, { t: 'end', id, n });
    }
  }

  /**
   * Ends every relay in both directions (shutdown). A relay whose answer has not begun is answered as one given up on (ended as it was, it was an empty
   * 200: no answer, nor a failure), and its owner told to stop, as when the client leaves: it would run on with its answer published to no one.
   */
  close(): void {
    clearInterval(this.#watch);
    for (const ac of this.#serving.values()) ac.abort();
    for (const [id, w] of [...this.#waiting]) {
      this.#forget(id);
      this.#send(w.owner, { t: 'abort', id });
      if (w.res.headersSent) w.res.end();
      else if (!w.received || replayable(w.req.method, w.req.body)) replyUnavailable(w.res, w.req.body, 'the gateway replica relaying this request to the one that owns its session is shutting down; retry');
      else replyUnavailable(w.res, w.req.body, STOPPED_HOLDER, false);
    }
  }
}
