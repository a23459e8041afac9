import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { authenticateRequest, type EdgeAuth } from './authorize-request.js';
import { isRefusal, sendRefusal } from './replies.js';

/** Who a link belongs to (issuer + subject + tenant, as sessions are bound). */
export interface LinkOwner {
  issuer: string;
  subject: string;
  tenant: string;
}

/** Why /oauth/start could not send the browser on: the sign-in not recorded (503), the authorization server not reached (502). */
export type UnavailableReason = 'store' | 'authorization-server';

/** Where /oauth/start sends the browser (with the OAuth state it carries), or why it cannot. */
export type StartOutcome =
  | { location: string; state: string; browser: string; maxAgeMs: number }
  | { unavailable: string; reason: 'store'; retryAfterSeconds: number }
  | { unavailable: string; reason: 'authorization-server' };

/** What the consent routes need of user consent (src/upstream/user-consent.ts implements it). */
export interface ConsentService {
  /** undefined: the link is unknown, expired or used; `unavailable`: the sign-in could not be recorded now. */
  start(flow: string): Promise<StartOutcome | undefined>;
  callback(q: { state?: string | undefined; code?: string | undefined; error?: string | undefined }, browser: string | undefined): Promise<{ linked: string; subject: string } | { refused: string; status: number; retryAfterSeconds?: number }>;
  links(user: LinkOwner): Promise<unknown[]>;
  revoke(upstream: string, user: LinkOwner, by: 'user'): Promise<boolean>;
}

/**
 * The cookie binding a consent to the browser that started it (only /oauth/callback ever receives it), one
 * per sign-in, named after its state: with one name for all, a second link opened before the first sign-in
 * ended replaced the first's binding, and the first callback was refused as from another browser.
 */
function cookieName(state: string): string {
  return `swb_consent_${createHash('sha256').update(state).digest('base64url').slice(0, 16)}`;
}
const UPSTREAM = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The gateway's consent routes. /oauth/start and /oauth/callback are for a user's browser: no bearer
 * token reaches them, so what authorizes them is the single-use flow reference (start) and the state
 * with its browser cookie (callback), both checked by the consent service. /oauth/links lists and
 * revokes the caller's own links with the same bearer token the MCP routes take. `unavailable` is told
 * of each /oauth/start answered 503 or 502, and why (switchboard_consent_unavailable_total).
 */
export function registerConsentRoutes(fastify: FastifyInstance, o: { consent: ConsentService; auth: EdgeAuth; secure: boolean; unavailable?: (reason: UnavailableReason) => void }): void {
  fastify.get('/oauth/start', async (req, reply) => {
    const flow = query(req, 'flow');
    const started = flow === undefined ? undefined : await o.consent.start(flow);
    if (!started) return page(reply, 400, 'Link expired', 'This consent link is unknown, expired or already used. Retry the call in your client for a new link.');
    if ('unavailable' in started) {
      o.unavailable?.(started.reason);
      if (started.reason === 'authorization-server') return page(reply, 502, 'Try again shortly', started.unavailable);
      return page(reply.header('retry-after', String(started.retryAfterSeconds)), 503, 'Try again shortly', started.unavailable);
    }
    const cookie = `${cookieName(started.state)}=${started.browser}; Path=/oauth/callback; Max-Age=${Math.ceil(started.maxAgeMs / 1000)}; HttpOnly; SameSite=Lax${o.secure ? '; Secure' : ''}`;
    return reply.code(302).header('set-cookie', cookie).header('location', started.location).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
  });

  fastify.get('/oauth/callback', async (req, reply) => {
    const state = query(req, 'state');
    const name = state === undefined ? undefined : cookieName(state);
    const outcome = await o.consent.callback({ state, code: query(req, 'code'), error: query(req, 'error') }, name && cookie(req, name));
    // The cookie has done its work either way.
    if (name) reply.header('set-cookie', `${name}=; Path=/oauth/callback; Max-Age=0; HttpOnly; SameSite=Lax${o.secure ? '; Secure' : ''}`);
    if ('refused' in outcome) {
      if (outcome.retryAfterSeconds !== undefined) {
        // The link could not be stored (its store failing or full): counted as /oauth/start's are.
        o.unavailable?.('store');
        reply.header('retry-after', String(outcome.retryAfterSeconds));
      }
      return page(reply, outcome.status, 'Not linked', outcome.refused);
    }
    // Naming the gateway user the account now serves lets someone who opened another's link see it.
    return page(reply, 200, 'Linked', `Your account at "${outcome.linked}" is linked to the gateway user "${outcome.subject}". Return to your client: its retry will now succeed. Not you? Tell your administrator.`);
  });

  fastify.get('/oauth/links', async (req, reply) => {
    const p = await principal(o.auth, req, reply);
    if (!p) return reply;
    return reply.header('cache-control', 'no-store').send({ links: await o.consent.links(p) });
  });

  fastify.delete<{ Params: { upstream: string } }>('/oauth/links/:upstream', async (req, reply) => {
    const p = await principal(o.auth, req, reply);
    if (!p) return reply;
    const upstream = req.params.upstream;
    if (!UPSTREAM.test(upstream)) return reply.code(400).send({ error: 'not an upstream name' });
    const removed = await o.consent.revoke(upstream, p, 'user');
    return removed ? reply.code(204).send() : reply.code(404).send({ error: `no link to upstream "${upstream}"` });
  });
}

async function principal(auth: EdgeAuth, req: FastifyRequest, reply: FastifyReply): Promise<Principal | undefined> {
  const r = await authenticateRequest(auth, req);
  if (isRefusal(r)) {
    sendRefusal(reply, r);
    return undefined;
  }
  return r;
}

function query(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' && v.length <= 4096 ? v : undefined;
}

function cookie(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function page(reply: FastifyReply, status: number, title: string, text: string): FastifyReply {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Switchboard</title></head><body><h1>${esc(title)}</h1><p>${esc(text)}</p></body></html>`;
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'")
    .header('referrer-policy', 'no-referrer')
    .send(html);
}
