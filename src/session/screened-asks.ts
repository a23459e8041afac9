import { unopenableUrl } from '../config/openable-url.js';
import { GatewayError, toJsonRpcError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { JsonRpcErrorObject } from '../jsonrpc/types.js';
import type { Logger } from '../observability/logger.js';
import { shownSampling } from '../policy/embedded-resources.js';
import type { HiddenTextGuard } from '../policy/hidden-text-guard.js';
import type { SessionGuard } from '../policy/session-guard.js';
import { attributedAsk, gatewayUrlIn, gatewayWordingIn } from '../policy/upstream-asks.js';
import { blocked } from './stages/hidden-text-stage.js';
import type { SessionObserver } from './session-observer.js';

/** The server→client requests scanned, and what each is. */
const ASKS: ReadonlyMap<string, 'sampling' | 'elicitation'> = new Map([
  ['sampling/createMessage', 'sampling'],
  ['elicitation/create', 'elicitation'],
]);

/** What screens the questions upstreams put to one client (a session's or a 2026-07-28 standing's). */
export interface AskScreen {
  hiddenText: HiddenTextGuard;
  guard: SessionGuard;
  observer: SessionObserver;
  logger: Logger;
  /** The gateway's public URL (EndpointRouter.ownUrl): no upstream's URL elicitation may lead under it. */
  ownUrl?: URL | undefined;
}

/**
 * What an upstream's server→client request is relayed with. A sampling request's messages and system
 * prompt are what the client's model reads, after a person approved what they saw of them: hidden text
 * there reads otherwise to each (before 2026-12-06 it was relayed unscanned). An elicitation's message and
 * form are what a person answers, and a host may render them (an image from an outside host fetched, a
 * bidi override reordering a name) or hand them to its model: before 2026-12-06 relayed unscanned too.
 * Scanned with the results' action, as text a server gives a model: passed on (audit), cleaned (strip), or
 * refused to the upstream with SWB_HIDDEN_TEXT_BLOCKED (block), never put to the client. Roots requests
 * carry no server text, and go as they are.
 *
 * An elicitation is also what the gateway's own confirmation questions are: before 2026-12-07 an upstream's
 * was relayed as written, so one copying the gateway's wording could not be told from them (and could ask
 * for a secret on the gateway's authority). Now one in the gateway's voice is refused (SWB_ELICITATION_REFUSED,
 * a warn line, a metric) and put to no one, and every other is shown opened by the upstream that asks
 * (attributedAsk), in both eras (relayed to a 2025 client, or a 2026-07-28 client's input round).
 *
 * A URL-mode one's url is what the client opens in the user's browser: before 2026-12-08 it was relayed
 * unchecked (javascript:, data:, file:, user:pass@host, a bidi override). One that is no absolute https:
 * URL (http: to loopback) is refused to the upstream as invalid params (-32602), logged, and put to no
 * one. A 2026-07-28 upstream's round is checked before this (roundAsks: SWB_UPSTREAM_PROTOCOL).
 */
export function screenedAsk(s: AskScreen, method: string, params: Record<string, unknown> | undefined, upstream: string | undefined): Record<string, unknown> | undefined | JsonRpcError {
  const kind = ASKS.get(method);
  if (kind === undefined || params === undefined) return params;
  if (kind === 'sampling') params = shownSampling(s.guard, ownContextOnly(params));
  if (kind === 'elicitation') {
    const field = gatewayWordingIn(params);
    if (field !== undefined) return toJsonRpcError(impersonation(s, upstream, field));
    if (gatewayUrlIn(params, s.ownUrl)) return toJsonRpcError(impersonation(s, upstream, 'url', 'gateway_url'));
    const why = params.mode === 'url' ? unopenableUrl(params.url) : undefined;
    if (why !== undefined) {
      const message = `Invalid params: ${unopenable(s, upstream, 'url', why)}`;
      return new JsonRpcError(ErrorCode.InvalidParams, message, { upstream: upstream ?? 'unknown', field: 'url' });
    }
  }
  const screened = scanned(s, kind, method, params, upstream);
  return kind === 'elicitation' && screened !== undefined && !(screened instanceof JsonRpcError) ? attributedAsk(upstream, screened) : screened;
}

/**
 * A sampling request asks with no context of other servers. Its includeContext ("thisServer", "allServers")
 * asks the client to attach context from MCP servers to the prompt, and the client's one server is the
 * gateway: every upstream of the endpoint, and with "allServers" whatever else its host is connected to. The
 * gateway declares no sampling.context to upstreams (told none, a server SHOULD send only "none"), and a
 * client MAY ignore the ask: relayed as written, one upstream had the client's model read what the others
 * returned, for its answer to carry back. Relayed as "none".
 */
function ownContextOnly(params: Record<string, unknown>): Record<string, unknown> {
  const asked = params.includeContext;
  return asked === undefined || asked === 'none' ? params : { ...params, includeContext: 'none' };
}

function scanned(s: AskScreen, kind: 'sampling' | 'elicitation', method: string, params: Record<string, unknown>, upstream: string | undefined): Record<string, unknown> | undefined | JsonRpcError {
  const policy = s.hiddenText.for(s.guard.tenant);
  if (policy === undefined || policy.results === 'off') return params;
  const walked = policy.scanResult(params);
  if (walked === undefined) return params;
  const caller = { upstream, name: method, tenant: s.guard.tenant.name, subject: s.guard.principal.subject, session: s.guard.session };
  const verdict = policy.settleResult(kind, walked, params, caller);
  if ('result' in verdict) return verdict.result;
  return toJsonRpcError(blocked(`The ${kind} request was`, verdict.blocked));
}

/**
 * An upstream's -32042 (URLElicitationRequired: open these URLs, then retry) as its caller gets it. Its
 * URL elicitations are questions put to the user as an elicitation/create is (a 2026-07-28 client's URL
 * round, a 2025 client's error data, or an older revision's error message): before 2026-12-07 their
 * messages reached the user as written. Now each is opened by the upstream that asks, and one in the
 * gateway's voice refuses the whole answer (SWB_ELICITATION_REFUSED, a warn line, a metric): nothing of it
 * is put to the user. So does one whose url is no URL to open (unopenableUrl), as the upstream's broken
 * answer (SWB_UPSTREAM_PROTOCOL): before 2026-12-08 it was shown or opened as it came. Its hidden text is the hidden-text stage's where that stage scans the call's answer
 * (its error too), else (`scan`) scanned here as an elicitation/create is: before 2026-12-07 a -32042 to
 * any other request (resources/subscribe) reached the user unscanned.
 */
export function screenedUrlAsks(s: AskScreen, err: JsonRpcError, upstream: string | undefined, scan: boolean): JsonRpcError | GatewayError {
  const data = err.data as { elicitations?: unknown } | undefined;
  const list = data !== null && typeof data === 'object' && Array.isArray(data.elicitations) ? (data.elicitations as unknown[]) : undefined;
  if (list === undefined) return err;
  // Its own message leads the URLs where a revision without URL elicitation reads them (legacy shape stage).
  if (gatewayWordingIn({ message: err.message }) !== undefined) return impersonation(s, upstream, 'error.message');
  for (const [i, e] of list.entries()) {
    const field = e !== null && typeof e === 'object' ? gatewayWordingIn(e as Record<string, unknown>) : undefined;
    if (field !== undefined) return impersonation(s, upstream, `error.data.elicitations[${i}].${field}`);
    if (e !== null && typeof e === 'object' && gatewayUrlIn(e as Record<string, unknown>, s.ownUrl)) return impersonation(s, upstream, `error.data.elicitations[${i}].url`, 'gateway_url');
    const why = unopenableUrl(e !== null && typeof e === 'object' ? (e as Record<string, unknown>).url : undefined);
    if (why !== undefined) {
      const field = `error.data.elicitations[${i}].url`;
      return new GatewayError('SWB_UPSTREAM_PROTOCOL', unopenable(s, upstream, field, why), { upstream: upstream ?? 'unknown', field });
    }
  }
  const screened = scan ? scanned(s, 'elicitation', 'URLElicitationRequired', { error: err.toObject() }, upstream) : { error: err.toObject() };
  if (screened === undefined || screened instanceof JsonRpcError) return screened ?? err;
  const clean = JsonRpcError.from(screened.error as JsonRpcErrorObject);
  const cleanList = (clean.data as { elicitations: unknown[] }).elicitations;
  const elicitations = cleanList.map((e) => (e !== null && typeof e === 'object' ? attributedAsk(upstream, e as Record<string, unknown>) : e));
  return new JsonRpcError(clean.code, clean.message, { ...(clean.data as object), elicitations });
}

/** Why an upstream's elicitation passes for the gateway's: the operator's words (the refusal, its warn line). */
const POSING = {
  gateway_wording: { refused: `speaks as the gateway does ("Switchboard asks you…"), which only the gateway's own confirmation questions may`, logged: "upstream elicitation refused: it speaks in the gateway's own voice" },
  gateway_url: { refused: "leads to the gateway's own pages (server.publicUrl), where only the gateway's own consent links send a user", logged: "upstream elicitation refused: its URL is the gateway's own" },
} as const;

/** An upstream's elicitation passing for the gateway's (its voice, or its URL): refused to it, said where the operator looks. */
function impersonation(s: AskScreen, upstream: string | undefined, field: string, reason: keyof typeof POSING = 'gateway_wording'): GatewayError {
  const name = upstream ?? 'unknown';
  s.observer.elicitationRefused(name, reason);
  s.logger.warn({ upstream: name, tenant: s.guard.tenant.name, subject: s.guard.principal.subject, field }, POSING[reason].logged);
  const message = `The elicitation of upstream ${JSON.stringify(name)} was refused: its ${field} ${POSING[reason].refused}; nothing was put to the user`;
  return new GatewayError('SWB_ELICITATION_REFUSED', message, { upstream: name, field });
}

/**
 * An upstream's URL elicitation whose url is no URL to send a user to (`why`, from unopenableUrl): said where
 * the operator looks (a warn line, the metric with reason "unsafe_url"); the message its refusal carries,
 * which never quotes the URL.
 */
function unopenable(s: AskScreen, upstream: string | undefined, field: string, why: string): string {
  const name = upstream ?? 'unknown';
  s.observer.elicitationRefused(name, 'unsafe_url');
  s.logger.warn({ upstream: name, tenant: s.guard.tenant.name, subject: s.guard.principal.subject, field }, 'upstream elicitation refused: its URL is not one to open');
  return `the URL elicitation of upstream ${JSON.stringify(name)} was refused: its ${field} ${why}; nothing was put to the user`;
}
