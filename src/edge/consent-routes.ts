import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { authenticateRequest, type EdgeAuth } from './authorize-request.js';
import { isRefusal, sendRefusal } from './replies.js';
import { confirmPage, page } from './consent-pages.js';
import { consentBodies, consentErrorHandler } from './consent-requests.js';

/** Who a link belongs to (issuer + subject + tenant, as sessions are bound). */
export interface LinkOwner {
  issuer: string;
  subject: string;
  tenant: string;
}

/** Why /oauth/start could not send the browser on: the sign-in not recorded (503), the authorization server not reached (502). */
export type UnavailableReason = 'store' | 'authorization-server';

type Unavailable = { unavailable: string; reason: 'store'; retryAfterSeconds: number } | { unavailable: string; reason: 'authorization-server' };

/** Where /oauth/start's POST sends the browser (with the OAuth state it carries), or why it cannot. */
export type StartOutcome = Started | Unavailable | { refused: string; status: number };

type Started = { location: string; state: string; browser: string; maxAgeMs: number };
type CallbackOutcome = { linked: string; subject: string } | { refused: string; status: number; retryAfterSeconds?: number; otherUser?: boolean } | Started | Unavailable;
/** The redirect URI an answer came back to: the shared /oauth/callback, the gateway's sign-in's, or an upstream's own. */
type CallbackAt = 'callback' | 'sign-in' | { upstream: string };

/** What GET /oauth/start shows: whose link, to which upstream, and the page's confirmation (cookie and form value). */
export type PreviewOutcome = { upstream: string; user: LinkOwner; browser: string; form: string; maxAgeMs: number } | Extract<Unavailable, { reason: 'store' }>;

/** What the consent routes need of user consent (src/upstream/user-consent.ts implements it). */
export interface ConsentService {
  /** undefined: the link is unknown, expired or used; `unavailable`: the flow could not be read now. */
  preview(flow: string): Promise<PreviewOutcome | undefined>;
  /** undefined: the link is unknown, expired or used; `refused`: no confirmation from this link's page in this browser. */
  start(flow: string, proof: { browser: string | undefined; form: string | undefined }): Promise<StartOutcome | undefined>;
  /** With vault.verifyUser the first callback (the gateway's own sign-in) goes on to the upstream's authorization server (`location`). */
  callback(q: { state?: string | undefined; code?: string | undefined; error?: string | undefined; iss?: string | undefined }, browser: string | undefined, at: CallbackAt): Promise<CallbackOutcome>;
  links(user: LinkOwner): Promise<Array<{ upstream: string }>>;
  revoke(upstream: string, user: LinkOwner, by: 'user'): Promise<boolean>;
}

export interface ConsentRouteOptions {
  consent: ConsentService;
  auth: EdgeAuth;
  secure: boolean;
  /** The origin of server.publicUrl: the only one the confirmation's POST may come from. */
  origin: string;
  /**
   * The path of server.publicUrl ('' or '/prefix', no trailing slash): a gateway served under a prefix (a
   * proxy passing /prefix/oauth/... on as /oauth/...) sets its cookies' Path and its form's action under it,
   * or the browser never sends them back.
   */
  basePath?: string;
  unavailable?: (reason: UnavailableReason) => void;
  /** vault.verifyUser refused a browser signed in to the gateway as another user than the link's (switchboard_consent_other_user_total). */
  otherUser?: () => void;
}

/**
 * The cookie binding a consent to the browser that started it (only /oauth/callback ever receives it), one
 * per sign-in, named after its state: with one name for all, a second link opened before the first sign-in
 * ended replaced the first's binding, and the first callback was refused as from another browser.
 */
function cookieName(state: string): string {
  return `swb_consent_${createHash('sha256').update(state).digest('base64url').slice(0, 16)}`;
}
/** The confirmation page's cookie, one per link (several may be open in tabs), sent only back to /oauth/start and only same-site. */
function confirmCookie(flow: string): string {
  return `swb_confirm_${createHash('sha256').update(flow).digest('base64url').slice(0, 16)}`;
}
const UPSTREAM = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The gateway's consent routes. /oauth/start and /oauth/callback are for a user's browser: no bearer
 * token reaches them. GET /oauth/start only shows whose link it is (the flow read, not taken) and asks to
 * confirm; its form's POST, same-origin, with the page's value and cookie, takes the single-use flow and
 * sends the browser to the authorization server. The callback is authorized by the state with its browser
 * cookie, checked by the consent service. /oauth/links lists and revokes the caller's own links with the
 * same bearer token the MCP routes take. `unavailable` is told of each /oauth/start answered 503 or 502,
 * and why (switchboard_consent_unavailable_total).
 */
export function registerConsentRoutes(fastify: FastifyInstance, o: ConsentRouteOptions): void {
  // A scope of their own: the MCP routes' error handler and parsers are the edge plugin's, not theirs.
  void fastify.register(async (scope) => {
    consentBodies(scope);
    scope.setErrorHandler(consentErrorHandler);
    consentRoutes(scope, o);
  });
}

function consentRoutes(fastify: FastifyInstance, o: ConsentRouteOptions): void {
  fastify.get('/oauth/start', async (req, reply) => {
    const flow = query(req, 'flow');
    const shown = flow === undefined ? undefined : await o.consent.preview(flow);
    if (!shown) return page(reply, 400, 'Link expired', 'This consent link is unknown, expired or already used. Retry the call in your client for a new link.');
    if ('unavailable' in shown) return unavailable(reply, shown, o);
    reply.header('set-cookie', consentCookie(o, 'start', confirmCookie(flow!), shown.browser, shown.maxAgeMs));
    return confirmPage(reply, { action: routePath(o, 'start'), flow: flow!, form: shown.form, upstream: shown.upstream, user: shown.user });
  });

  // The confirmation's POST: the page's form (see consentBodies).
  fastify.post('/oauth/start', async (req, reply) => postStart(req, reply, o));

  fastify.get('/oauth/callback', async (req, reply) => getCallback(req, reply, o, 'callback'));
  // vault.verifyUser: the gateway's own sign-in comes back here, never to the upstreams' callback (signInRedirectUri).
  fastify.get('/oauth/callback/sign-in', async (req, reply) => getCallback(req, reply, o, 'sign-in'));
  // Each upstream's own redirect URI (upstreamRedirectUri): an answer is taken only at its state's upstream's.
  fastify.get<{ Params: { upstream: string } }>('/oauth/callback/upstream/:upstream', async (req, reply) => getCallback(req, reply, o, { upstream: req.params.upstream }));

  fastify.get('/oauth/links', async (req, reply) => {
    const p = await principal(o.auth, req, reply);
    if (!p) return reply;
    // A token for some endpoints only (its aud) sees the links to their upstreams alone, as it reaches no other.
    const only = o.auth.upstreamsOnly?.(p);
    const links = await o.consent.links(p);
    return reply.header('cache-control', 'no-store').send({ links: only ? links.filter((l) => only.has(l.upstream)) : links });
  });

  fastify.delete<{ Params: { upstream: string } }>('/oauth/links/:upstream', async (req, reply) => {
    const p = await principal(o.auth, req, reply);
    if (!p) return reply;
    const upstream = req.params.upstream;
    if (!UPSTREAM.test(upstream)) return reply.code(400).send({ error: 'not an upstream name' });
    if (o.auth.upstreamsOnly?.(p)?.has(upstream) === false) {
      return reply.code(403).send({ error: `this token was issued for an endpoint that does not serve upstream "${upstream}" (its "aud" claim): revoke with a token for the gateway (${o.origin}${o.basePath ?? ''}) or for an endpoint serving it` });
    }
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

/** The authorization response's parameters, each named at most once (RFC 6749 §3.1). */
const ANSWER_PARAMS = ['code', 'error', 'iss'] as const;

/**
 * The first of `names` the query gives more than once. A repeated `iss` was read as none, which skips the
 * mix-up check (see UserOAuthClient.answerProblem): a server keeping the query of the redirect_uri it is
 * sent adds its own iss to one another server put there, and its code went to that other server.
 */
function repeated(req: FastifyRequest, names: readonly string[]): string | undefined {
  const q = req.query as Record<string, unknown> | undefined;
  return names.find((n) => Array.isArray(q?.[n]));
}

function cookie(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The authorization server's answer: the state checked by the consent service, then the page that says what came of it. */
async function getCallback(req: FastifyRequest, reply: FastifyReply, o: ConsentRouteOptions, at: CallbackAt): Promise<FastifyReply> {
  const state = query(req, 'state');
  const name = state === undefined ? undefined : cookieName(state);
  // An answer naming a parameter twice (RFC 6749 §3.1) goes on with its state alone: spent, no code redeemed.
  const twice = repeated(req, ANSWER_PARAMS);
  const answer = twice ? { state } : { state, code: query(req, 'code'), error: query(req, 'error'), iss: query(req, 'iss') };
  const outcome = await o.consent.callback(answer, name && cookie(req, name), at);
  // The cookie has done its work either way (a further Set-Cookie adds to this one).
  const spentBinding = name && consentCookie(o, 'callback', name, '', 0);
  if (spentBinding) reply.header('set-cookie', spentBinding);
  if (twice) {
    req.log.warn({ parameter: twice }, 'consent callback refused: the authorization response names a parameter more than once (a mix-up attack?); its code was not redeemed');
    return page(reply, 400, 'Not linked', `Nothing was linked: the answer names "${twice}" more than once. Retry the call in your client for a new link.`);
  }
  if ('location' in outcome) return reply.code(302).header('set-cookie', binding(outcome, o)).header('location', outcome.location).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
  if ('unavailable' in outcome) return unavailable(reply, outcome, o);
  if ('refused' in outcome) {
    if (outcome.otherUser) o.otherUser?.();
    if (outcome.retryAfterSeconds !== undefined) {
      // The link could not be stored (its store failing or full): counted as /oauth/start's are.
      o.unavailable?.('store');
      reply.header('retry-after', String(outcome.retryAfterSeconds));
    }
    return page(reply, outcome.status, 'Not linked', outcome.refused);
  }
  // Naming the gateway user the account now serves lets someone who opened another's link see it.
  return page(reply, 200, 'Linked', `Your account at "${outcome.linked}" is linked to the gateway user "${outcome.subject}". Return to your client: its retry will now succeed. Not you? Tell your administrator.`);
}

/** The confirmation's POST: same-origin only, with the page's value and cookie; then on to the authorization server. */
async function postStart(req: FastifyRequest, reply: FastifyReply, o: ConsentRouteOptions): Promise<FastifyReply> {
  if (typeof req.body === 'string') return page(reply, 415, 'Not linked', "This confirmation is not the gateway page's form (application/x-www-form-urlencoded). Open the link from your own client and confirm there.");
  const form = req.body instanceof URLSearchParams ? req.body : new URLSearchParams();
  const flow = field(form, 'flow');
  const foreign = crossOrigin(req, o.origin);
  if (foreign) {
    req.log.warn({ origin: req.headers.origin, fetchSite: req.headers['sec-fetch-site'] }, `consent confirmation refused: ${foreign}`);
    return page(reply, 403, 'Not linked', `This confirmation did not come from the gateway's own page (${foreign}). Open the link from your own client and confirm there.`);
  }
  const name = flow === undefined ? undefined : confirmCookie(flow);
  const started = flow === undefined ? undefined : await o.consent.start(flow, { browser: name && cookie(req, name), form: field(form, 'confirm') });
  if (!started) return page(reply, 400, 'Link expired', 'This consent link is unknown, expired or already used. Retry the call in your client for a new link.');
  if ('refused' in started) return page(reply, started.status, 'Not linked', started.refused);
  if ('unavailable' in started) return unavailable(reply, started, o);
  const spent = consentCookie(o, 'start', name!, '', 0);
  // 303: the browser follows with a GET, never re-posting the form to the authorization server.
  return reply.code(303).header('set-cookie', [binding(started, o), spent]).header('location', started.location).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
}

/**
 * Why a POST is not the gateway's own page submitted by the user: a browser says where a request comes
 * from (Sec-Fetch-Site; Origin on every POST), and neither may name another site. Absent headers (an old
 * browser, a non-browser client) leave the page's value and its same-site cookie to decide, and so does
 * "Origin: null": a browser sends that for every form POST from a page whose referrer policy is
 * no-referrer, as the confirmation page's is (Fetch §3.1), so the page's own form came with it. An opaque
 * origin elsewhere (a sandboxed frame) is cross-site by Sec-Fetch-Site, and without it has no cookie.
 */
function crossOrigin(req: FastifyRequest, origin: string): string | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return `Sec-Fetch-Site: ${String(site)}`;
  const from = req.headers.origin;
  if (from !== undefined && from !== 'null' && from !== origin) return `from origin ${from.slice(0, 200)}`;
  return undefined;
}

/** The cookie binding a sign-in's state to this browser (see cookieName). */
function binding(s: Started, o: ConsentRouteOptions): string {
  return consentCookie(o, 'callback', cookieName(s.state), s.browser, s.maxAgeMs);
}

/** A consent route's path under server.publicUrl's (see ConsentRouteOptions.basePath). */
function routePath(o: ConsentRouteOptions, route: 'start' | 'callback'): string {
  return `${o.basePath ?? ''}/oauth/${route}`;
}

/**
 * A consent cookie (`maxAgeMs` 0: spent), sent back to its route only. The confirmation's is Strict (only the
 * gateway's own page posts it); the callback's Lax, as the authorization server's redirect to it is a
 * cross-site top-level GET that a Strict cookie would not come with.
 */
function consentCookie(o: ConsentRouteOptions, route: 'start' | 'callback', name: string, value: string, maxAgeMs: number): string {
  return `${name}=${value}; Path=${routePath(o, route)}; Max-Age=${Math.ceil(maxAgeMs / 1000)}; HttpOnly; SameSite=${route === 'start' ? 'Strict' : 'Lax'}${o.secure ? '; Secure' : ''}`;
}

function unavailable(reply: FastifyReply, u: Unavailable, o: ConsentRouteOptions): FastifyReply {
  o.unavailable?.(u.reason);
  if (u.reason === 'authorization-server') return page(reply, 502, 'Try again shortly', u.unavailable);
  return page(reply.header('retry-after', String(u.retryAfterSeconds)), 503, 'Try again shortly', u.unavailable);
}

function field(form: URLSearchParams, name: string): string | undefined {
  const v = form.get(name);
  return v !== null && v.length <= 4096 ? v : undefined;
}
