import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../observability/logger.js';
import { refuseAdmin } from './admin-auth.js';
import type { AdminTarget } from './admin-target.js';
import { SECURITY_HEADERS } from './console-assets.js';
import { pageOf, sessionKey } from './paging.js';

/** How often the views are compared with what the consoles were last sent. */
const TICK_MS = 2000;
/** A stream's token is checked again this often: an expired or revoked one ends the stream. */
const REAUTH_MS = 60_000;
/** Audit lines are sent in batches at most this often, and at most this many per batch (the rest counted as dropped). */
const AUDIT_FLUSH_MS = 250;
const AUDIT_BATCH_MAX = 100;
/** Consoles open at once; more get 503 (each costs a view computation per tick). */
export const MAX_STREAMS = 16;
/**
 * A console that falls this far behind is cut (it reconnects and gets fresh views): counted beyond one
 * full set of the current views, which a console that just opened has not read yet. Held to this alone,
 * a sessions view over 1 MiB (some 3,000 sessions) cut every console as it opened, for good.
 */
const MAX_BUFFERED_BYTES = 1 << 20;
/**
 * The sessions view holds the first this many sessions in id order (as GET /sessions pages them) and,
 * while more are open, the nextCursor to GET /sessions for the rest. It held every session: with 100,000
 * in Redis each tick (every 2 s) read every record and built one huge view, blocking the event loop.
 */
export const CONSOLE_SESSIONS = 200;
const STREAM_TYPE = 'text/event-stream; charset=utf-8';
/** An SSE comment: the console's reader skips it (no data line). */
const KEEPALIVE = ': keepalive\n\n';

interface Stream {
  res: ServerResponse;
  authorization: string | undefined;
  checkedAt: number;
  /** The credentials it was last checked against (credentialsStamp): others in force check it again at once. */
  credentials: string | undefined;
  /** It has had the views (at open): until then a tick sends it none, which open() would send again. */
  ready: boolean;
}

type View = 'sessions' | 'upstreams' | 'tenants' | 'pins';
const VIEWS: readonly View[] = ['sessions', 'upstreams', 'tenants', 'pins'];

/**
 * The console's live updates: one Server-Sent Events stream per open console. The views (sessions,
 * upstreams, tenants, pending pins) are computed once per tick for all streams and sent only when they
 * changed; audit lines are pushed as they are written (batched, bounded). Polling the gateway's own
 * state keeps the request path free of admin hooks; the one hook is the audit log's tail.
 */
export class AdminEvents {
  readonly #target: AdminTarget;
  readonly #log: Logger;
  readonly #streams = new Set<Stream>();
  readonly #last = new Map<View, string>();
  /** The bytes of the views in #last: what a console's buffer may hold beyond MAX_BUFFERED_BYTES. */
  #viewBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #untail: (() => void) | undefined;
  #audit: unknown[] = [];
  #auditDropped = 0;
  #auditTimer: NodeJS.Timeout | undefined;
  /** Views whose last computation failed (warned once until they recover). */
  readonly #failing = new Set<View>();
  #ticking: Promise<void> | undefined;
  readonly #keepAliveMs: number;
  #beat: NodeJS.Timeout | undefined;

  /**
   * `keepAliveMs`: how often every open stream gets a comment line (server.keepAliveMs, as the MCP
   * streams). Views go out only when they change, so a quiet gateway sent nothing for as long as it
   * stayed quiet, and a proxy's idle timeout in front of the console (nginx's 60 s) cut the stream.
   */
  constructor(target: AdminTarget, log: Logger, keepAliveMs = 15_000) {
    this.#target = target;
    this.#log = log;
    this.#keepAliveMs = keepAliveMs;
  }

  /** GET /events (already authenticated by the admin hook): takes the response over as an event stream. */
  async open(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    // HEAD (a monitor's probe, curl -I): Fastify serves it with this handler, and Node sends a HEAD no body,
    // so a stream's headers, held for its first byte, never went out: the probe was never answered and
    // held a console slot while it stayed. Its headers are the stream's, with nothing opened.
    if (req.method === 'HEAD') return reply.code(200).type(STREAM_TYPE).send();
    if (this.#streams.size >= MAX_STREAMS) return reply.code(503).send({ error: { code: 'busy', message: `at most ${MAX_STREAMS} console streams at once` } });
    reply.hijack();
    const res = reply.raw;
    // The client may have left while the admin hook verified its token (a key set fetched from the
    // identity provider takes a while): its 'close' has fired already and would never drop the stream,
    // which would hold a slot for good.
    if (res.destroyed || res.socket === null || res.socket.destroyed) return void res.destroy();
    // Every admin response's headers (see SECURITY_HEADERS): a hijacked response is not given them by the
    // listener's onSend hook, and this one carries every view and the audit tail.
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': STREAM_TYPE, 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    const stream: Stream = { res, authorization: req.headers.authorization, checkedAt: Date.now(), credentials: this.#credentialsStamp(), ready: false };
    this.#streams.add(stream);
    res.on('close', () => this.#drop(stream));
    this.#write(stream, `retry: 2000\nevent: hello\ndata: ${JSON.stringify({ replica: this.#target.replica, audit: this.#tailOn(), time: Date.now() })}\n\n`);
    await this.#ensureViews();
    // Gone meanwhile: the client left, or a tick's re-check refused it and ended it (the credentials changed
    // while it opened). Written to after its end, the response raised an error nobody handled, which ended
    // the whole process; and the timers set below ran with no stream to serve.
    if (!this.#streams.has(stream)) return undefined;
    // A view that could not be computed (the store down) is left out: a later tick sends it once it can be.
    stream.ready = true;
    for (const view of VIEWS) {
      const json = this.#last.get(view);
      if (json !== undefined) this.#write(stream, frame(view, json));
    }
    this.#timer ??= setInterval(() => this.nudge(), TICK_MS).unref();
    // A copy: a write may cut a slow stream, which unlists it.
    this.#beat ??= setInterval(() => [...this.#streams].forEach((s) => this.#write(s, KEEPALIVE)), this.#keepAliveMs).unref();
    return undefined;
  }

  /** Computes the views now and sends what changed (after an operator's action, and on each tick). */
  poke(): Promise<void> {
    if (this.#streams.size === 0) return Promise.resolve();
    this.#ticking ??= this.#tick().finally(() => (this.#ticking = undefined));
    return this.#ticking;
  }

  async #ensureViews(): Promise<void> {
    if (this.#last.size < VIEWS.length) await this.poke();
    // A console opened while a tick was running: the views it needs may still be missing.
    if (this.#last.size < VIEWS.length) await this.#tick();
  }

  async #tick(): Promise<void> {
    await this.#reauthenticate();
    for (const view of VIEWS) {
      let json: string;
      try {
        json = JSON.stringify(await this.#view(view));
      } catch (err) {
        // Once per view until it can be computed again, not on every tick of an outage.
        if (!this.#failing.has(view)) this.#log.warn({ err: (err as Error).message, view }, 'console view could not be computed');
        this.#failing.add(view);
        continue;
      }
      if (this.#failing.delete(view)) this.#log.info({ view }, 'console view computed again');
      const before = this.#last.get(view);
      if (before === json) continue;
      this.#viewBytes += Buffer.byteLength(json) - (before === undefined ? 0 : Buffer.byteLength(before));
      this.#last.set(view, json);
      // A console still opening gets every view from open() once they are all there: sent here too, it got
      // each one twice (twice the bytes, over the cut for a large sessions view).
      for (const s of this.#streams) if (s.ready) this.#write(s, frame(view, json));
    }
  }

  async #view(view: View): Promise<unknown> {
    // The age is left out where the opening time is there: it changed at every tick, so the whole table
    // went out every 2 s and the console rebuilt it (a selection, a tooltip, a click in progress lost).
    if (view === 'sessions') {
      const page = { after: undefined, limit: CONSOLE_SESSIONS };
      const { items, nextCursor } = pageOf(await this.#target.sessions(page), sessionKey, page, 'sessions');
      return { items: items.map(({ ageSeconds, ...s }) => (s.openedAt === undefined ? { ...s, ageSeconds } : s)), limit: CONSOLE_SESSIONS, ...(nextCursor ? { nextCursor } : {}) };
    }
    if (view === 'upstreams') return { items: await this.#target.upstreams() };
    if (view === 'tenants') return { items: await this.#target.tenants() };
    const pins = await this.#target.pins();
    return pins ? { items: pins } : { items: [], off: true };
  }

  /**
   * Each stream once a minute, and every stream whose credentials are no longer those in force: a reload
   * that replaced a leaked admin.token (or the auth keys, the admin scope), or a rotated admin.tokenFile,
   * left a console signed in with the old token getting every view and the audit tail for up to a minute.
   */
  async #reauthenticate(): Promise<void> {
    const now = Date.now();
    const stamp = this.#credentialsStamp();
    for (const s of this.#streams) {
      const moved = stamp !== undefined && s.credentials !== stamp;
      if (!moved && now - s.checkedAt < REAUTH_MS) continue;
      s.checkedAt = now;
      s.credentials = stamp ?? s.credentials;
      const refusal = await this.#refusal(s);
      // Not checkable now (the issuer's key set unreachable) is not refused: checked again at the next minute.
      if (!refusal || refusal.status === 503) continue;
      this.#write(s, frame('denied', JSON.stringify({ status: refusal.status, message: refusal.message })));
      s.res.end();
      this.#drop(s);
    }
  }

  /**
   * What the credentials in force are, as a digest (no copy of the token kept); undefined when they cannot
   * be read now, which is no change: the minute's check ends the streams for it, as before.
   */
  #credentialsStamp(): string | undefined {
    try {
      const c = this.#target.credentials();
      return createHash('sha256').update(`${c.generation ?? 0}\n${c.scope}\n${c.token ?? ''}`).digest('base64url');
    } catch {
      return undefined;
    }
  }

  /**
   * Credentials that cannot be checked (the token file unreadable, a key file gone) end the stream as a
   * request would be refused (500): thrown out of the tick timer they were an unhandled rejection that
   * ended the whole gateway.
   */
  async #refusal(s: Stream): Promise<{ status: number; message: string } | undefined> {
    try {
      return await refuseAdmin(s.authorization, this.#target.credentials());
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'console stream ended: its credentials could not be checked');
      return { status: 500, message: (err as Error).message };
    }
  }

  /**
   * poke() for callers that do not wait (the tick timer, the admin listener's hooks): nobody is there to
   * answer, so a failure is logged, never left as an unhandled rejection (which ends the process).
   */
  nudge(): void {
    void this.poke().catch((err: Error) => this.#log.error({ err: err.message }, 'console views could not be updated'));
  }

  /** Subscribes to the audit log while any console is open; false when the audit log is off. */
  #tailOn(): boolean {
    this.#untail ??= this.#target.tailAudit((line) => {
      if (this.#audit.length >= AUDIT_BATCH_MAX) this.#auditDropped++;
      else this.#audit.push(line);
      this.#auditTimer ??= setTimeout(() => this.#flushAudit(), AUDIT_FLUSH_MS).unref();
    });
    return this.#untail !== undefined;
  }

  #flushAudit(): void {
    this.#auditTimer = undefined;
    const json = JSON.stringify({ lines: this.#audit, dropped: this.#auditDropped });
    this.#audit = [];
    this.#auditDropped = 0;
    for (const s of this.#streams) this.#write(s, frame('audit', json));
  }

  #write(s: Stream, text: string): void {
    if (s.res.writableLength > MAX_BUFFERED_BYTES + this.#viewBytes) {
      this.#log.warn('a console stream reads too slowly: cut (it reconnects)');
      s.res.destroy();
      this.#drop(s);
      return;
    }
    s.res.write(text);
  }

  #drop(s: Stream): void {
    if (!this.#streams.delete(s) || this.#streams.size > 0) return;
    // Nobody watching: no ticks, no audit tail, and the next console starts from fresh views.
    clearInterval(this.#timer);
    this.#timer = undefined;
    clearInterval(this.#beat);
    this.#beat = undefined;
    this.#untail?.();
    this.#untail = undefined;
    this.#last.clear();
    this.#viewBytes = 0;
  }

  /** Ends every stream (the admin listener is closing: its connections must not hold the close up). */
  close(): void {
    for (const s of [...this.#streams]) {
      s.res.destroy();
      this.#drop(s);
    }
    clearTimeout(this.#auditTimer);
  }
}

function frame(event: string, json: string): string {
  return `event: ${event}\ndata: ${json}\n\n`;
}
