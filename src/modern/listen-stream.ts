import type { JsonRpcMessage } from '../jsonrpc/types.js';
import type { SessionGuard } from '../policy/session-guard.js';
import type { AttemptSink } from './exchange.js';
import type { ModernSession } from './modern-session.js';

import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { META_SERVER_INFO, META_SUBSCRIPTION_ID } from '../jsonrpc/modern-meta.js';
import { SubscribedUris } from '../jsonrpc/subscribed-uris.js';
import { SERVER_INFO } from '../session/client-session.js';
import { atExpiry, type ExpiryTimer } from '../auth/principal.js';

/** The bounds of one listen (ModernServiceOptions). */
export interface ListenLimits {
  listenUrisMax: number;
  listensPerPrincipal: number;
}

interface Filter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

const FLAG_OF: Record<string, keyof Filter> = {
  'notifications/tools/list_changed': 'toolsListChanged',
  'notifications/prompts/list_changed': 'promptsListChanged',
  'notifications/resources/list_changed': 'resourcesListChanged',
};

/**
 * The first `max` distinct URIs of a filter's resourceSubscriptions: each may cost a resources/subscribe
 * upstream, and one POST (one request of the tenant's rate) must not make tens of thousands of them.
 */
function firstUris(list: unknown[], max: number): Set<string> {
  const out = new Set<string>();
  for (const u of list) {
    if (out.size >= max) break;
    if (typeof u === 'string') out.add(u);
  }
  return out;
}

/** What of the requested filter the upstreams behind the endpoint can honour, and the tenant may see. */
async function honoured(session: ModernSession, guard: SessionGuard, asked: Filter, maxUris: number): Promise<Filter> {
  // What server/discover offers this tenant: a kind its rules allow nothing of is not honoured either
  // (an acknowledged promptsListChanged would tell it what discover does not).
  const caps = guard.tenant.shownCapabilities(session.capabilities()) as Record<string, any>;
  const out: Filter = {};
  if (asked.toolsListChanged && caps.tools) out.toolsListChanged = true;
  if (asked.promptsListChanged && caps.prompts) out.promptsListChanged = true;
  if (asked.resourcesListChanged && caps.resources) out.resourcesListChanged = true;
  if (Array.isArray(asked.resourceSubscriptions) && caps.resources?.subscribe) {
    const uris: string[] = [];
    for (const uri of firstUris(asked.resourceSubscriptions, maxUris)) {
      // A URI the tenant may not read is not honoured (and not told apart from one that does not exist).
      if (guard.check('resources/read', { uri })?.allowed && (await session.subscribe(uri))) uris.push(uri);
    }
    out.resourceSubscriptions = uris;
  }
  return out;
}

/**
 * subscriptions/listen, built from what 2025 upstreams send: the acknowledgement first (with the
 * subset the gateway can honour), then each requested list_changed and resources/updated, tagged with
 * the subscription id (the listen request's id). Resource subscriptions become reference-counted
 * resources/subscribe calls upstream, for at most `listenUrisMax` URIs (the rest are not honoured). The client closing the stream ends it; so does shutdown, with
 * the graceful final result. A standing holds at most `listensPerPrincipal` of them: one more ends its oldest.
 */
export async function listen(session: ModernSession, guard: SessionGuard, sink: AttemptSink, limits: ListenLimits): Promise<void> {
  const t0 = performance.now();
  const asked = (sink.call.params.notifications ?? {}) as Filter;
  const id = sink.id;
  session.settingUpListen(1);
  let filter: Filter;
  try {
    filter = await honoured(session, guard, asked, limits.listenUrisMax);
  } finally {
    session.settingUpListen(-1);
  }
  // The client left while the subscriptions were made (its 'close' came before there was an owner to
  // tell): undone, or the standing would count a listener for ever and never be swept. Or the standing
  // ended meanwhile (an operator, a reload): a listener there would never hear anything, so the client is told.
  if (!sink.open || session.closed) {
    for (const uri of filter.resourceSubscriptions ?? []) void session.unsubscribe(uri);
    if (sink.open) sink.finish(new JsonRpcError(ErrorCode.InternalError, 'ended: the gateway ended this caller\'s standing on the endpoint while the stream was being set up; send subscriptions/listen again').toResponse(id));
    return;
  }
  const tag = (params: Record<string, unknown> | undefined) => ({ ...params, _meta: { ...(params?._meta as object | undefined), [META_SUBSCRIPTION_ID]: id } });
  const send = (m: JsonRpcMessage) => sink.notify(m);
  // An update of one of them or of a sub-resource of one (isSubResource), found by its parents; sent once however many cover it.
  const uris = new SubscribedUris<true>();
  for (const uri of filter.resourceSubscriptions ?? []) uris.set(uri, true);
  send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: tag({ notifications: filter }) });
  const onNote = (method: string, params: Record<string, unknown> | undefined) => {
    const flag = FLAG_OF[method];
    // A URI the tenant may no longer read (a reload narrowed its rules) is no longer reported either; nor a
    // sub-resource it may not read under a parent it may: judged by the updated URI itself.
    if (flag ? filter[flag] === true : method === 'notifications/resources/updated' && uris.covers(String(params?.uri)) && guard.mayRead(params?.uri)) send({ jsonrpc: '2.0', method, params: tag(params) });
  };
  const stop = (outcome: 'ok' | 'error' | 'cancelled' = 'cancelled') => {
    if (!session.ends.delete(end)) return; // ended once: counted once
    session.principalListens.delete(end);
    clearTimeout(expiry.timer);
    session.listeners.delete(onNote);
    for (const uri of uris.keys()) void session.unsubscribe(uri);
    // Answered here, not by the pipeline: counted when it ends (the client closing it is its cancellation).
    session.observer.requestDone({ method: 'subscriptions/listen', endpoint: session.endpoint.config.path, upstream: 'none', outcome, seconds: (performance.now() - t0) / 1000, tool: undefined, era: 'modern' });
  };
  const end = (reason?: JsonRpcError) => {
    stop(reason ? 'error' : 'ok');
    // serverInfo as on every other result (the spec: SHOULD be on every response); before 2026-12-07 it had none.
    sink.finish(reason ? reason.toResponse(id) : { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: id, [META_SERVER_INFO]: SERVER_INFO } } });
  };
  const expiry: ExpiryTimer = {};
  endOldest(session, limits.listensPerPrincipal - 1);
  session.listeners.add(onNote);
  session.ends.add(end);
  session.principalListens.add(end);
  sink.owner = { detach: () => stop() };
  // Authorized once, by that token: before 2026-12-07 the stream went on for as long as its connection held.
  atExpiry(guard.principal.expiresAt, () => end(new JsonRpcError(ErrorCode.InternalError, TOKEN_EXPIRED)), expiry);
}

/** Its token expired: every request the client makes now is refused 401, and the stream must not go on hearing the endpoint. */
const TOKEN_EXPIRED = 'ended: the access token this stream was opened with has expired; send subscriptions/listen again with a fresh token';

/**
 * Ends the principal's oldest listens on the endpoint until at most `keep` stay: each holds a connection, a
 * listener every notification of the endpoint reaches and its upstream subscriptions, and a client that opens
 * them and never closes one (or loses them half-open) must not pile them up. The oldest is the likeliest
 * forgotten. Counted across the principal's standings (one per token with token exchange): before 2026-12-07
 * per standing, so a principal with N tokens held N times the bound.
 */
function endOldest(session: ModernSession, keep: number): void {
  const all = session.principalListens;
  if (all.size <= keep) return;
  const reason = new JsonRpcError(ErrorCode.InternalError, `ended: the same caller opened more than ${keep + 1} subscriptions/listen streams on this endpoint (modern.listensPerPrincipal)`);
  for (const end of all) {
    if (all.size <= keep) break;
    end(reason);
  }
}
