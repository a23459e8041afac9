import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { notFound, withheld } from '../jsonrpc/not-found.js';
import { Cancellation } from '../jsonrpc/cancellation.js';
import { listMethods, listOf, methodSpec, type ListSpec } from '../jsonrpc/methods.js';
import { checkParamsShape } from '../jsonrpc/params-shape.js';
import { forEachPage, pageParams } from '../jsonrpc/paging.js';
import type { UpstreamCaller, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import { CursorIssuers, decodeCursor, MAX_CURSOR_CHARS, planPage } from './cursor.js';
import { SCREENED, screenItem, type DefinitionScreen } from './definition-screen.js';
import type { EndpointView } from './endpoint-view.js';
import type { Curation } from './curation.js';
import { hasName, prefixed, splitPrefixed } from './names.js';
import { warnBadToolName } from './tool-name-warnings.js';
import { admitByGate, gatherCatalogues, relistedFor } from './session-tools.js';
import { admitListing, pinRefusal } from './pinned-call.js';
import { failAsList } from './list-failure.js';
import { mayShowOf } from './shown-upstreams.js';
import type { ToolView, ViewTool } from './tool-view.js';
import { SessionLeases } from './session-leases.js';
import { mergeCapabilities, mergeInstructions, type UpstreamReach } from './capabilities.js';
import { resourceNotFound } from './resource-not-found.js';
import { OwnershipListing } from './ownership-listing.js';
import { UriOwners } from './learned-owners.js';
import { SessionSubscriptions } from './session-subscriptions.js';
import { noCompletions, sharedLevel, upstreamCall, type Params } from './upstream-call.js';
import type { RouteContext } from './route-context.js';

export type { RouteContext } from './route-context.js';

type Result = Record<string, unknown>;

/** Upstreams (their pools) already logged for listing unnamed items: one line each, not one per list. */
const badNamesLogged = new WeakSet<object>();

/**
 * One client session's view of its endpoint: which instance serves each upstream (its own for
 * per-session upstreams, the least busy for shared ones), and the routing of every method.
 */
export class RouterSession {
  readonly #endpoint: EndpointView;
  readonly caller: UpstreamCaller;
  readonly #leases: SessionLeases;
  readonly #subscriptions: SessionSubscriptions;
  /** The listing that tells who owns a URI no list has named, kept a while (see there). */
  readonly #ownership = new OwnershipListing();
  readonly #uris: UriOwners; // who owns each URI: the endpoint's book, before it what this session's own instances listed
  readonly #cursors = new CursorIssuers(); // which process gave each list cursor: its next page is asked of it
  /** The params of the session's last logging/setLevel that succeeded (the level in effect): a reload's new instances are set to it. */
  #level: Params;
  #closed = false;

  /** `from`: the pool of each lease (default: the endpoint's pool of that name now). */
  constructor(endpoint: EndpointView, caller: UpstreamCaller, leases: Map<string, UpstreamInstance>, from?: ReadonlyMap<string, UpstreamPool>) {
    this.#endpoint = endpoint;
    this.caller = caller;
    this.#leases = new SessionLeases(endpoint, caller, leases, from);
    this.#subscriptions = new SessionSubscriptions(endpoint, caller, () => this.#closed);
    this.#uris = new UriOwners(endpoint);
  }

  /** What this session's tenant sees of the tools (the endpoint's curation, or the tenant's own), as configured now. */
  get curation(): Curation {
    return this.#endpoint.tools.curationFor(this.caller.tenant);
  }

  /** The endpoint was reconfigured by a reload: see SessionLeases.rebind and SessionSubscriptions.follow. */
  async rebind(): Promise<Array<{ pool: UpstreamPool; inst: UpstreamInstance }>> {
    const stale = await this.#leases.rebind(() => this.#closed);
    this.#uris.clear();
    // Before the stale leases are handed back: a subscription on one is dropped there first.
    await this.#subscriptions.follow((pool) => this.#instance(pool));
    // New servers know no level, and send what they choose (often warnings and worse): not waited for.
    if (this.#level !== undefined) this.#setLevel(this.#level, { signal: new Cancellation(), requestId: 'rebind-setLevel' }).catch(() => {});
    return stale;
  }

  /**
   * The endpoint's tools as this session's instances list them, curated for its tenant. `calling`: the name a call is
   * made by; on an endpoint that prefixes, only its own upstream's listing (read from the name, or from the rename
   * that gives it) is waited for. Names of different upstreams never meet: its tools are named the same without the others'.
   * `asList` (search mode's answers): fails where an aggregated list fails (failAsList: of the upstreams the tenant `reaches`).
   */
  async toolView(calling?: string, asList = false, reaches?: (upstream: string) => boolean): Promise<ToolView> {
    const target = calling !== undefined && this.#endpoint.prefixNames ? splitPrefixed(this.curation.canonicalOf(calling) ?? calling)?.upstream : undefined;
    const waitFor = calling !== undefined && this.#endpoint.prefixNames ? (p: UpstreamPool) => p.name === target : undefined;
    const gathered = await gatherCatalogues(this.#pools('tools'), (p) => this.#instance(p), waitFor);
    if (asList) failAsList(gathered.failures, gathered.catalogues.keys(), this.#endpoint.config.failureMode, reaches);
    const { catalogues, sources } = gathered;
    const view = this.#endpoint.tools.view(this.curation, catalogues, sources);
    if (calling === undefined || view.named(calling) !== undefined) return view; // else maybe added silently: re-listed (bounded)
    const pool = target !== undefined ? this.#endpoint.pool(target) : this.#endpoint.prefixNames ? undefined : this.#endpoint.pools[0];
    const own = this.curation.canonicalOf(calling) ?? calling, tool = this.#endpoint.prefixNames ? splitPrefixed(own)?.name : own;
    return pool && tool !== undefined && (await relistedFor(this.#instance(pool), tool)) ? this.toolView(calling) : view;
  }

  /** The tools of `view` tool pinning lets through (`tools`: those of them asked about; see admitByGate). */
  admit(view: ToolView, tools: readonly ViewTool[]): Promise<ViewTool[]> {
    return admitByGate(this.#endpoint.gate, tools, view.catalogues);
  }

  /** Tool pinning's refusal of a call of `tool`, if any: the route's own check (pinRefusal), asked before a confirmation is. */
  async pinRefusal(tool: ViewTool): Promise<GatewayError | undefined> {
    const pool = this.#endpoint.pool(tool.upstream), inst = pool && this.#instance(pool), gate = this.#endpoint.gate;
    return gate && inst ? pinRefusal(gate, pool!, inst, await inst.catalogues.get('tools'), tool.raw) : undefined;
  }

  /** Which upstream a request goes to, as far as it can be told without sending it (for the audit log). */
  upstreamOf(method: string, params: Params, spec = methodSpec(method)): string | undefined {
    if (!spec?.attributed) return undefined;
    if (spec.route === 'name') {
      if (!this.#endpoint.prefixNames) return this.#endpoint.pools[0]?.name;
      // The client's: an upstream only if the endpoint has it (not String() of `{"toString": 1}`: it throws).
      const prefix = typeof params?.name === 'string' ? splitPrefixed(params.name)?.upstream : undefined;
      return prefix !== undefined && this.#endpoint.pool(prefix) ? prefix : undefined;
    }
    if (spec.route !== 'uri') return undefined;
    const pools = this.#pools('resources');
    return pools.length === 1 ? pools[0]!.name : typeof params?.uri === 'string' ? this.#uris.ownerOf(params.uri) : undefined;
  }

  /** URIs this session is subscribed to (for its record, so another replica can renew them). */
  subscribedUris(): string[] {
    return this.#subscriptions.uris();
  }

  capabilities(): Result {
    return mergeCapabilities(this.#endpoint.pools, this.#leases.instances);
  }

  /** The upstreams' instructions, each as `screen` (the caller's hidden-text scanning of definitions, if on) shows it; of those `tenant` reaches. */
  instructions(screen?: DefinitionScreen, tenant?: UpstreamReach): string | undefined {
    return mergeInstructions(this.#endpoint.pools, this.#leases.instances, this.caller, screen, tenant && ((u, caps) => tenant.reachesUpstream(u, this.#endpoint.prefixNames, caps)));
  }

  #instance(pool: UpstreamPool, cursor?: string): UpstreamInstance {
    if (this.#closed) throw new GatewayError('SWB_SESSION_CLOSED', 'the session has ended');
    return this.#cursors.instanceFor(pool, cursor, this.caller);
  }

  #forward(pool: UpstreamPool, method: string, params: Params, ctx: RouteContext): Promise<Result> {
    return this.#instance(pool).request(method, params, { caller: this.caller, callerRequestId: ctx.requestId, signal: ctx.signal, onProgress: ctx.onProgress, receipt: ctx });
  }

  async request(method: string, params: Params, ctx: RouteContext): Promise<Result> {
    // The method table says how each method is served; a method without a route (or with a name the
    // table does not hold, "__proto__" included) is never forwarded.
    const spec = methodSpec(method);
    if (spec?.route !== undefined) checkParamsShape(method, params);
    switch (spec?.from === 'server' ? undefined : spec?.route) {
      case 'list':
        return this.#list(method, spec!.list!, params, ctx);
      case 'name':
        return this.#byName(method, params, ctx);
      case 'uri':
        return this.#byUri(method, params, ctx);
      case 'subscribe':
        return this.#subscribe(params, ctx);
      case 'unsubscribe':
        return this.#subscriptions.unsubscribe(params?.uri as string, ctx.signal).then(() => ({}));
      case 'complete':
        return this.#complete(params, ctx);
      case 'setLevel':
        return this.#setLevel(params, ctx);
      default:
        // Deny by default: a method the gateway does not understand could carry state across sessions.
        throw new JsonRpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
  }

  /** An upstream this session uses announced that a list changed (or restarted, or a reload changed the endpoint). */
  listChanged(method: string): void {
    if (method === 'notifications/resources/list_changed') this.#ownership.changed();
  }

  /** Client notifications that concern upstreams (cancellation is handled by the session); their params are not passed on. */
  notification(method: string, _params?: Params): void {
    if (method === 'notifications/roots/list_changed') this.#leases.rootsChanged(); // to per-session instances, at a bounded rate
  }

  #pools(capability: string): UpstreamPool[] {
    return this.#endpoint.pools.filter((p) => {
      const caps = (this.#leases.get(p.name)?.identity ?? p.identity)?.capabilities;
      return !caps || caps[capability] !== undefined;
    });
  }

  async #list(method: string, spec: ListSpec, params: Params, ctx: RouteContext): Promise<Result> {
    // Only upstreams the caller may be shown an item of (its tenant: the route stage's; the gateway's own lists have none): another's name was in the cursor.
    const pools = this.#pools(methodSpec(method)!.capability!).filter((p) => mayShowOf(p.name, spec.key, this.#endpoint.prefixNames, this.curation, ctx.tenant));
    let targets: Array<[UpstreamPool, string | undefined]>;
    if (params?.cursor !== undefined) {
      const cursor = decodeCursor(method, params.cursor, pools.map((p) => p.name));
      targets = Object.entries(cursor).map(([name, c]) => [this.#endpoint.pool(name)!, c]);
    } else {
      targets = pools.map((p) => [p, undefined]);
    }
    const gate = spec.key === 'tools' ? this.#endpoint.gate : undefined;
    const settled = await Promise.allSettled(
      // async: a pool with no running instance throws from pick(); that must count as this upstream's failure.
      targets.map(async ([pool, cursor]) => {
        const { cursor: _drop, ...rest } = params ?? {};
        const inst = this.#instance(pool, cursor);
        const page = this.#cursors.note(pool, inst, await inst.request(method, cursor === undefined ? (Object.keys(rest).length ? rest : undefined) : { ...rest, cursor }, {
          caller: this.caller,
          callerRequestId: ctx.requestId,
          signal: ctx.signal,
          onProgress: ctx.onProgress,
        }));
        // A first page with no next one is the whole listing: it replaces the cached catalogue when it differs (what
        // a client is shown is what it can call), and what tool pinning withheld of it replaces what it knew.
        const complete = cursor === undefined && typeof page.nextCursor !== 'string';
        if (spec.key === 'tools' || spec.key === 'prompts') inst.catalogues.saw(spec.key, page[spec.key], complete);
        return gate && Array.isArray(page.tools) ? { ...page, tools: await admitListing(gate, pool, inst, page, complete) } : page;
      }),
    );
    const items: unknown[] = [];
    let failures: Map<string, unknown> | undefined; // in the endpoint's order (failAsList)
    const leftOut = (pool: UpstreamPool, err: unknown) => {
      (failures ??= new Map()).set(pool.name, err);
      this.#endpoint.logger.warn({ upstream: pool.name, method, err: (err as Error).message }, 'upstream left out of an aggregated list');
    };
    const pages = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [{ pool: targets[i]![0], fresh: targets[i]![1] === undefined, page: s.value }] : (leftOut(targets[i]![0], s.reason), [])));
    // What fits in the cursor the client is to send back: the rest waits for a later page (planPage).
    const plan = planPage(method, pages.map((p) => ({ name: p.pool.name, fresh: p.fresh, next: typeof p.page.nextCursor === 'string' ? p.page.nextCursor : undefined })));
    for (const { pool, page } of pages) {
      if (plan.dropped.has(pool.name)) {
        leftOut(pool, new JsonRpcError(ErrorCode.InternalError, `the upstream's list cursor is longer than a gateway cursor may be (${MAX_CURSOR_CHARS} characters)`));
        continue;
      }
      if (plan.deferred.has(pool.name)) continue;
      const list = page[spec.key], screened = ctx.screen && SCREENED[spec.key];
      if (Array.isArray(list)) for (const item of list) items.push(this.#exportItem(pool.name, spec, item, screened ? screenItem(ctx.screen!, screened, pool.name, item) : item));
    }
    // Every upstream asked is one the caller may be shown an item of (above): another's failure is none of its.
    if (failures) failAsList(failures, pages.map((p) => p.pool.name), this.#endpoint.config.failureMode, undefined, ctx.partial === true);
    const out: Result = { [spec.key]: items.filter((x) => x !== undefined) };
    if (plan.cursor !== undefined) out.nextCursor = plan.cursor;
    return out;
  }

  #exportItem(upstream: string, spec: ListSpec, listed: any, item: any): unknown {
    // Who owns a URI: learned from what the upstream listed (`listed`), also a template the screen withholds (`item`: what is shown).
    if (spec.key === 'resources' && typeof listed?.uri === 'string') this.#uris.learn(listed.uri, upstream);
    if (spec.key === 'resourceTemplates' && typeof listed?.uriTemplate === 'string') this.#uris.learnTemplate(listed.uriTemplate, upstream);
    if (item === null || typeof item !== 'object') return undefined;
    if (spec.named && !hasName(item)) {
      // String(["summarize"]) is "summarize": such an item would be listed under a name it does not have.
      if (!badNamesLogged.has(this.#endpoint.pool(upstream) ?? this)) {
        badNamesLogged.add(this.#endpoint.pool(upstream) ?? this);
        this.#endpoint.logger.warn({ upstream, list: spec.key, name: typeof item.name === 'string' ? item.name : String(typeof item.name) }, 'protocol violation: the upstream listed an item whose name is not a non-empty string; such items are left out (logged once per upstream)');
      }
      return undefined;
    }
    if (!this.#endpoint.prefixNames) return item;
    const name = prefixed(upstream, item.name);
    // Too long is shortened later (maxToolNameLength); a character outside the rule is not, unless a rename replaces the name.
    if (spec.key === 'tools' && !this.curation.listable(name)) {
      warnBadToolName(this.#endpoint.logger, this.#endpoint.pool(upstream) ?? this, upstream, item.name);
      return undefined;
    }
    // Only the name changes: schemas, annotations and icons pass through untouched.
    return { ...item, name };
  }

  /** Maps an exposed name to its upstream; unknown names, and a tool's no list shows (Curation.listable), answered as unknown. */
  #resolveName(exposed: unknown, kind: 'tool' | 'prompt'): { pool: UpstreamPool; name: string } {
    if (typeof exposed !== 'string') throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params: "name" must be a string`);
    if (!this.#endpoint.prefixNames) return { pool: this.#endpoint.pools[0]!, name: exposed };
    const split = splitPrefixed(exposed);
    const pool = split && this.#endpoint.pool(split.upstream);
    if (!split || !pool || (kind === 'tool' && !this.curation.listable(exposed))) throw notFound(kind, exposed);
    return { pool, name: split.name };
  }

  async #byName(method: string, params: Params, ctx: RouteContext): Promise<Result> {
    const kind = methodSpec(method)!.target!(params)!.kind as 'tool' | 'prompt';
    const { pool, name } = this.#resolveName(params?.name, kind);
    const inst = this.#instance(pool);
    // The gateway answers unknown names itself, the same way it answers names policy hides (after one re-list: findFor).
    const catalogue = await inst.catalogues.findFor(kind === 'tool' ? 'tools' : 'prompts', name);
    const definition = catalogue.get(name);
    if (!definition) throw notFound(kind, String(params?.name));
    ctx.toolFound = kind === 'tool';
    if (kind === 'tool') ctx.checkDefinition?.(definition);
    // Withheld for its hidden text: answered exactly as an unknown name (the audit says why).
    if (ctx.screen && ctx.screen.show(kind, pool.name, definition) === undefined) throw withheld(kind, String(params?.name), ctx.screen.rule);
    if (kind === 'tool' && this.#endpoint.gate) {
      // Cached per definition: on every call but the first this is answered synchronously.
      let refused = pinRefusal(this.#endpoint.gate, pool, inst, catalogue, definition);
      if (refused instanceof Promise) refused = await refused;
      if (refused) throw refused;
    }
    return inst.request(method, upstreamCall(params, name), { caller: this.caller, callerRequestId: ctx.requestId, signal: ctx.signal, onProgress: ctx.onProgress, receipt: ctx });
  }

  /** `listed`: only an owner the lists named (a URI or template of it), also where one upstream serves all. */
  #uriPool(uri: unknown, listed = false): UpstreamPool | undefined {
    if (typeof uri !== 'string') throw new JsonRpcError(ErrorCode.InvalidParams, 'Invalid params: "uri" must be a string');
    const candidates = this.#pools('resources');
    if (candidates.length === 1 && !listed) return candidates[0];
    const owner = this.#uris.ownerOf(uri);
    return owner ? this.#endpoint.pool(owner) : undefined;
  }

  async #byUri(method: string, params: Params, ctx: RouteContext): Promise<Result> {
    const pool = (await this.#ownerOf(params?.uri, ctx)) ?? undefined;
    if (!pool) throw notFound('resource', String(params?.uri));
    // The upstream's "not found" in the gateway's words: a denied URI reads exactly like it.
    return this.#forward(pool, method, params, ctx).catch((err: unknown) => Promise.reject(resourceNotFound(err, String(params?.uri)) ?? err));
  }

  /**
   * The upstream that owns a URI. Unknown to the lists seen so far: list resources and templates once
   * more, unless this session did a moment ago (OwnershipListing). The URI itself is never shown to an
   * upstream that does not claim it.
   */
  async #ownerOf(uri: unknown, ctx: RouteContext, listed = false): Promise<UpstreamPool | undefined> {
    const known = this.#uriPool(uri, listed);
    if (known) return known;
    // The unnamed lists (resources, templates): listing them teaches the endpoint who owns which URIs.
    // Shared with requests that come while it runs: they wait for it rather than list too. Its own
    // cancellation: this request's (a client's cancel) must not end what the others wait on.
    const own: RouteContext = { signal: new Cancellation(), requestId: ctx.requestId, screen: ctx.screen, partial: true };
    await this.#ownership.run(async () => {
      for (const { method, list } of listMethods().filter((s) => !s.list.named)) {
        await forEachPage((cursor) => this.#list(method, list, pageParams(cursor), own), () => {}, 100).catch(() => {});
      }
    }, ctx.signal);
    return this.#uriPool(uri, listed);
  }

  async #subscribe(params: Params, ctx: RouteContext): Promise<Result> {
    const uri = params?.uri as string;
    // A URI the lists show, with one upstream too: one nothing serves was forwarded, accepted, never honoured.
    const pool = await this.#ownerOf(uri, ctx, true);
    if (!pool) throw notFound('resource', String(uri));
    if (this.#subscriptions.has(uri)) return {};
    await this.#subscriptions.subscribe(uri, this.#instance(pool), { params, callerRequestId: ctx.requestId, signal: ctx.signal });
    return {};
  }

  /** A completion names a template by its exact uriTemplate. */
  #templatePool(template: string): UpstreamPool | undefined {
    const owner = this.#uris.ownerOfTemplate(template);
    return owner ? this.#endpoint.pool(owner) : undefined;
  }

  async #complete(params: Params, ctx: RouteContext): Promise<Result> {
    const ref = params?.ref as Record<string, unknown> | undefined;
    if (ref?.type === 'ref/prompt') {
      const { pool, name } = this.#resolveName(ref.name, 'prompt');
      const inst = this.#instance(pool);
      // Unknown prompts are answered by the gateway, exactly as prompts policy hides, after one re-list as prompts/get (findFor).
      const definition = (await inst.catalogues.findFor('prompts', name)).get(name);
      if (!definition) throw notFound('prompt', String(ref.name));
      if (ctx.screen && ctx.screen.show('prompt', pool.name, definition) === undefined) throw withheld('prompt', String(ref.name), ctx.screen.rule);
      return this.#pools('completions').includes(pool) ? inst.request('completion/complete', { ...params, ref: { ...ref, name } }, { caller: this.caller, callerRequestId: ctx.requestId, signal: ctx.signal }) : noCompletions();
    }
    if (ref?.type === 'ref/resource') {
      // The exact template first: a URI prefix two upstreams' templates share names only the last one listed.
      // Not known here (listed on another replica, or before a reload): listed again, as for a read.
      const template = String(ref.uri);
      const pool = this.#templatePool(template) ?? (await this.#ownerOf(ref.uri, ctx).then((p) => this.#templatePool(template) ?? p));
      if (!pool) throw notFound('template', String(ref.uri));
      if (ctx.screen && (await this.#withheldTemplate(ctx.screen, pool.name, template, ctx))) throw withheld('template', template, ctx.screen.rule);
      return this.#pools('completions').includes(pool) ? this.#forward(pool, 'completion/complete', params, ctx) : noCompletions();
    }
    throw new JsonRpcError(ErrorCode.InvalidParams, 'Invalid params: "ref" must be a ref/prompt or ref/resource');
  }

  /** Whether the screen withholds a template; one no list has shown it yet (a list on another replica, before a restart, none) is listed first. */
  async #withheldTemplate(screen: DefinitionScreen, upstream: string, template: string, ctx: RouteContext): Promise<boolean> {
    if (screen.withholds(upstream, template) === undefined) {
      const own: RouteContext = { signal: ctx.signal, requestId: ctx.requestId, screen, partial: true };
      await forEachPage((cursor) => this.#list('resources/templates/list', listOf('resources/templates/list')!, pageParams(cursor), own), () => {}, 100).catch(() => {});
    }
    return screen.withholds(upstream, template) === true;
  }

  /** The level to the session's own instances; one it shares is set to debug (see sharedLevel). */
  #setLevel(params: Params, ctx: RouteContext): Promise<Result> {
    const targets = this.#pools('logging').flatMap((pool) => pool.instancesFor(this.caller));
    const opts = { caller: this.caller, callerRequestId: ctx.requestId, signal: ctx.signal };
    // Kept once answered, as the session keeps its level: a refused one is not in effect (sent on by a reload, the new instances had a level the session never had).
    return Promise.all(targets.map((inst) => inst.request('logging/setLevel', this.#leases.get(inst.config.name) === inst ? params : sharedLevel(params), opts))).then(() => ((this.#level = params), {}));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#endpoint.forget(this.caller);
    this.#subscriptions.closeAll();
    await this.#leases.releaseAll();
  }
}
