import type { EndpointConfig } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import { NO_TRACING, type Tracing } from '../observability/tracing.js';
import type { RequestId } from '../jsonrpc/types.js';
import { listChangedNotifications, listMethods } from '../jsonrpc/methods.js';
import { forEachPage, pageParams } from '../jsonrpc/paging.js';
import { belowLevel } from '../jsonrpc/modern-meta.js';
import { HiddenTextGuard } from '../policy/hidden-text-guard.js';
import type { HiddenTextDeps } from '../policy/hidden-text-policy.js';
import type { UpstreamCaller, UpstreamIdentity, UpstreamInstance, UpstreamPool } from '../upstream/index.js';
import { prefixed } from './names.js';
import type { EndpointView } from './endpoint-view.js';
import { RouterSession } from './router-session.js';
import type { ToolGate } from './tool-gate.js';
import { gatherCatalogues } from './session-tools.js';
import { hearsChange } from './shown-upstreams.js';
import { learn, templateOwner, TemplateOwners } from './owner-books.js';
import type { UpstreamReach } from './capabilities.js';
import type { EmbeddingsObserver } from './semantic-ranker.js';
import { ToolViews } from './tool-views.js';

type Target = { caller: UpstreamCaller; relatedRequestId: RequestId | undefined };

const LIST_CHANGED = listChangedNotifications();
export { MAX_MATCHED_URI_CHARS } from './owner-books.js';

/**
 * One endpoint (virtual server): the upstreams it exposes, how names are prefixed, which sessions are
 * open on it, and the delivery of upstream-initiated notifications to those sessions only.
 */
export class EndpointRouter implements EndpointView {
  /** The path never changes; the rest may, by a reload (reconfigure). */
  config: EndpointConfig;
  pools: readonly UpstreamPool[];
  prefixNames: boolean;
  /** Some upstream of it exchanges the client's token: its 2026-07-28 standings are one token's each (ModernSessions). */
  exchangesTokens: boolean;
  readonly logger: Logger;
  /** Tool pinning's check on every tool definition listed or called; undefined when pinning is off. */
  readonly gate: ToolGate | undefined;
  /** Exposure, curation and exposed names of the tools; the views the search index lives in. */
  tools: ToolViews;
  /** Spans of the requests served here (the no-op when tracing is off). */
  readonly tracing: Tracing;
  /** Hidden-text scanning of definitions and results, per tenant (guardrails.hiddenText). */
  hiddenText: HiddenTextGuard;
  /** The gateway's public URL (server.publicUrl, restart-only): where an upstream's URL elicitation may not lead a user (see gatewayUrlIn). */
  readonly ownUrl: URL | undefined;
  readonly #sessions = new Map<UpstreamCaller, RouterSession>();
  /** Each session's tenant policy as it is now (a reload may replace it): whose list_changed it hears (tells). */
  readonly #reach = new Map<UpstreamCaller, () => UpstreamReach>();
  /** Sessions whose leases are being taken, with the pools asked (see abandon). */
  readonly #opening = new Map<UpstreamCaller, readonly UpstreamPool[]>();
  /** Resource URI → upstream, learned from shared upstreams' lists (a session's own instance's: RouterSession's); lets resources/read go straight to its owner. */
  readonly #uriOwner = new Map<string, string>();
  /** Resource templates learned from shared upstreams' lists (a session's own instance's: RouterSession's). */
  readonly #templates = new TemplateOwners();
  readonly #detach: Array<() => void> = [];
  readonly #embeddings: EmbeddingsObserver | undefined;
  /** The preparation a tools/list_changed started, while it runs, and whether another came meanwhile. */
  #preparing: Promise<void> | undefined;
  #prepareAgain = false;
  /**
   * Told of every change an upstream announced on this endpoint (list_changed, resources/updated), once
   * per announcement: what other replicas' subscribers must hear too (their instances are other processes).
   */
  readonly changes = new Set<(method: string, params: Record<string, unknown> | undefined, upstream: string) => void>();
  #retired = false;

  /** A reload removed this endpoint: the edge no longer finds it, and a session still opening on it is refused. */
  get retired(): boolean {
    return this.#retired;
  }

  retire(): void {
    this.#retired = true;
  }

  constructor(config: EndpointConfig, pools: ReadonlyMap<string, UpstreamPool>, logger: Logger, gate?: ToolGate, tracing: Tracing = NO_TRACING, hiddenText: HiddenTextDeps = {}, embeddings?: EmbeddingsObserver, ownUrl?: string) {
    this.config = config;
    this.ownUrl = ownUrl === undefined ? undefined : new URL(ownUrl);
    this.hiddenText = new HiddenTextGuard(config.guardrails.hiddenText, config.path, hiddenText);
    this.gate = gate;
    this.tracing = tracing;
    this.logger = logger.child({ endpoint: config.path });
    this.pools = config.upstreams.map((n) => pools.get(n)!);
    this.prefixNames = config.prefix === 'always' || (config.prefix === 'auto' && this.pools.length > 1);
    this.exchangesTokens = this.pools.some((p) => p.config.auth?.type === 'token-exchange');
    this.#embeddings = embeddings;
    this.tools = new ToolViews(config.tools, this.prefixNames, this.logger, { embeddings, live: () => this.pools });
    this.#attach();
  }

  #attach(): void {
    for (const pool of this.pools) {
      const onNote = (inst: UpstreamInstance, method: string, params: Record<string, unknown> | undefined, target: () => Target | undefined) =>
        this.#onNotification(pool, inst, method, params, target);
      const onReady = (inst: UpstreamInstance, identity: UpstreamIdentity, restarted: boolean) => {
        if (!restarted) return;
        // A restarted upstream may expose a different catalogue: let clients re-list, and prepare its view
        // and index as a tools/list_changed does (the first search after a restart built them before).
        for (const m of LIST_CHANGED) this.#broadcast(pool, inst, m);
        this.#toolsListChanged();
      };
      pool.on('notification', onNote);
      pool.on('ready', onReady);
      this.#detach.push(() => {
        pool.off('notification', onNote);
        pool.off('ready', onReady);
      });
    }
  }

  /**
   * A reload changed this endpoint (its settings, or a pool it uses was replaced): the next request sees
   * the new upstreams, names and tool settings, in one synchronous step. Sessions stay open; each is
   * returned for rebinding (RouterSession.rebind) and told that its lists changed.
   */
  reconfigure(config: EndpointConfig, pools: ReadonlyMap<string, UpstreamPool>): RouterSession[] {
    if (config.path !== this.config.path) throw new Error(`an endpoint's path cannot change (${this.config.path} → ${config.path})`);
    for (const d of this.#detach.splice(0)) d();
    this.config = config;
    this.pools = config.upstreams.map((n) => pools.get(n)!);
    this.prefixNames = config.prefix === 'always' || (config.prefix === 'auto' && this.pools.length > 1);
    this.exchangesTokens = this.pools.some((p) => p.config.auth?.type === 'token-exchange');
    this.tools = new ToolViews(config.tools, this.prefixNames, this.logger, { embeddings: this.#embeddings, previous: this.tools, live: () => this.pools });
    this.hiddenText = this.hiddenText.with(config.guardrails.hiddenText);
    // What was learned of URIs may name an upstream that is gone: learn again from the next lists.
    this.#uriOwner.clear();
    this.#templates.clear();
    this.#attach();
    const sessions = [...this.#sessions.values()];
    for (const s of sessions) {
      for (const m of LIST_CHANGED) {
        s.listChanged(m);
        s.caller.clientNotify(m, undefined);
      }
    }
    return sessions;
  }

  /** The sessions open on this endpoint (both eras). */
  sessions(): RouterSession[] {
    return [...this.#sessions.values()];
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  pool(name: string): UpstreamPool | undefined {
    return this.pools.find((p) => p.name === name);
  }

  /** Leases the session's own instance of every upstream that gives it one, then registers the session. `reach`: its tenant's policy, as it is now. */
  async open(caller: UpstreamCaller, reach?: () => UpstreamReach): Promise<RouterSession> {
    const leases = new Map<string, UpstreamInstance>();
    // The pools as they are now: a reload may swap them while the leases are taken.
    const pools = this.pools;
    // allSettled: when one lease fails, every other one must have finished before it is released.
    this.#opening.set(caller, pools);
    const settled = await Promise.allSettled(pools.map((p) => p.lease(caller)));
    this.#opening.delete(caller);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(settled.map((r, i) => (r.status === 'fulfilled' && r.value ? pools[i]!.release(r.value) : undefined)));
      throw failed.reason;
    }
    settled.forEach((r, i) => {
      const lease = (r as PromiseFulfilledResult<UpstreamInstance | undefined>).value;
      if (lease) leases.set(pools[i]!.name, lease);
    });
    const session = new RouterSession(this, caller, leases, new Map(pools.map((p) => [p.name, p])));
    this.#sessions.set(caller, session);
    if (reach) this.#reach.set(caller, reach);
    // Reconfigured meanwhile: this session missed the rebinding every other one got.
    if (pools !== this.pools) void session.rebind().then((stale) => Promise.all(stale.map((l) => l.pool.release(l.inst))));
    return session;
  }

  /** The session ended while its leases were being taken: a lease still waiting in a pool's queue stops waiting. */
  abandon(caller: UpstreamCaller): void {
    for (const p of this.#opening.get(caller) ?? []) p.abandon(caller);
  }

  forget(caller: UpstreamCaller): void {
    this.#sessions.delete(caller);
    this.#reach.delete(caller);
  }

  /** Whether a caller of `tenant` (its name; its policy, none: all of it) is told `upstream`'s `method` (hearsChange). */
  tells(upstream: string, method: string, tenant: string, reach: UpstreamReach | undefined): boolean {
    return hearsChange(upstream, method, this.prefixNames, this.tools.curationFor(tenant), reach);
  }

  learnUri(uri: string, upstream: string): void {
    learn(this.#uriOwner, uri, upstream);
  }

  ownerOfTemplate(template: string): string | undefined {
    return this.#templates.ownerOf(template);
  }

  learnTemplate(template: string, upstream: string): void {
    this.#templates.learn(template, upstream);
  }

  /** The upstream that owns a URI, if the lists have told us: one that lists it, else by the templates (templateOwner; `own`: a session's, first). */
  ownerOfUri(uri: string, own?: TemplateOwners): string | undefined {
    return this.#uriOwner.get(uri) ?? templateOwner(uri, this.#templates, own);
  }

  /**
   * Tools of an upstream became visible again (a pin approval): every session of this endpoint whose
   * tenant may be shown a tool of that upstream is told to re-list.
   */
  toolsChanged(upstream: string): void {
    if (!this.pool(upstream)) return;
    const method = 'notifications/tools/list_changed';
    for (const s of this.#sessions.values()) if (this.tells(upstream, method, s.caller.tenant, this.#reach.get(s.caller)?.())) s.caller.clientNotify(method, undefined);
  }

  #broadcast(pool: UpstreamPool, inst: UpstreamInstance, method: string): void {
    for (const s of this.#sessions.values()) {
      if (!pool.serves(s.caller, inst)) continue;
      s.listChanged(method);
      // Not to a tenant whose lists leave the upstream out: it would re-list for nothing, and learn when that upstream changed.
      if (this.tells(pool.name, method, s.caller.tenant, this.#reach.get(s.caller)?.())) s.caller.clientNotify(method, undefined);
    }
    // To the other replicas only what concerns everyone there: a tenant's, user's or session's own instance is theirs.
    if (pool.commonInstance() !== undefined) for (const c of this.changes) c(method, undefined, pool.name);
  }

  #onNotification(
    pool: UpstreamPool,
    inst: UpstreamInstance,
    method: string,
    params: Record<string, unknown> | undefined,
    resolve: () => Target | undefined,
  ): void {
    if (LIST_CHANGED.includes(method)) {
      this.#broadcast(pool, inst, method);
      if (method === 'notifications/tools/list_changed') this.#toolsListChanged();
      return;
    }
    if (method === 'notifications/resources/updated') {
      const uri = params?.uri;
      if (typeof uri !== 'string') return;
      for (const caller of inst.subscribers(uri)) {
        if (this.#sessions.has(caller)) caller.clientNotify(method, params);
      }
      if (pool.commonInstance() !== undefined) for (const c of this.changes) c(method, { uri }, pool.name);
      return;
    }
    // Logging and anything else: only to the one session it can be attributed to, never broadcast.
    const target = resolve();
    if (target && this.#sessions.has(target.caller)) {
      // Each session's own level (a shared upstream is set to debug for all of them: see RouterSession's setLevel).
      if (method === 'notifications/message' && belowLevel(params?.level, target.caller.logLevelFor?.(target.relatedRequestId))) return;
      target.caller.clientNotify(method, params, target.relatedRequestId, pool.name);
    } else if (!target) {
      this.logger.debug({ upstream: pool.name, method }, 'dropped an upstream notification that no single session owns');
    }
  }

  /**
   * One preparation at a time: a burst of tools/list_changed (a restarting server sends five or six) made
   * one whole listing of the upstream, and in search mode one index, per notification. One that comes
   * while a preparation runs makes one more after it, so the last change is always prepared for.
   */
  #toolsListChanged(): void {
    if (this.#preparing) return void (this.#prepareAgain = true);
    this.#preparing = this.prepareTools().finally(() => {
      this.#preparing = undefined;
      if (this.#prepareAgain) {
        this.#prepareAgain = false;
        this.#toolsListChanged();
      }
    });
  }

  /**
   * Builds the tool views (their exposed names, logged) and, in search mode, their indexes ahead of the first
   * request: at start, at a reload that changed the endpoint, and when an upstream says its tools changed or
   * restarted. One per curation: the endpoint's, and each tenant's own layer (left to that tenant's first
   * search, a reload's curation change was paid for on a request). Only from instances every session
   * sees (shared upstreams); with a per-session or per-tenant upstream the first request builds them. A
   * failure here costs nothing: the first request tries again.
   */
  async prepareTools(): Promise<void> {
    const pools = this.pools.filter((p) => p.identity?.capabilities.tools);
    if (pools.length === 0 || pools.some((p) => !p.commonInstance())) return;
    try {
      const { catalogues, sources } = await gatherCatalogues(pools, (p) => p.commonInstance()!);
      const tools = this.tools;
      for (const curation of tools.curations) {
        const view = tools.view(curation, catalogues, sources);
        if (!tools.searchMode) continue;
        view.index();
        // Fetched in the background (a provider's failure is logged and counted where it happens).
        void view.vectors();
      }
    } catch (err) {
      this.logger.debug({ err: (err as Error).message }, 'tool index not prepared; the first search builds it');
    }
  }

  /**
   * Lists every ready shared upstream's tools and prompts once and returns the naming problems:
   * duplicates (which a client could not tell apart) and names that break the MCP rule once prefixed.
   */
  async checkCatalogue(): Promise<string[]> {
    const problems: string[] = [];
    // Named lists only: resource URIs are not prefixed, so they cannot collide by the gateway's doing.
    for (const kind of listMethods().filter((s) => s.list.named).map((s) => ({ method: s.method, key: s.list.key, capability: s.capability! }))) {
      const seen = new Map<string, string>();
      for (const pool of this.pools) {
        if (!pool.identity?.capabilities[kind.capability]) continue;
        // Only an instance every session sees speaks for the endpoint (none in per-session modes).
        const inst = pool.commonInstance();
        if (!inst) continue;
        // Raw pages, not the instance's catalogue: that is keyed by name, and a name listed twice is what we look for.
        const names: string[] = [];
        const collect = (page: Record<string, unknown>) => {
          for (const item of (page[kind.key] as Array<{ name?: unknown }> | undefined) ?? []) names.push(String(item.name));
        };
        await forEachPage(async (cursor) => inst.request(kind.method, pageParams(cursor), {}), collect, 100).catch(() => {});
        for (const name of names) {
          const exposed = this.prefixNames ? prefixed(pool.name, name) : name;
          const other = seen.get(exposed);
          if (other !== undefined) problems.push(`${kind.key.slice(0, -1)} "${exposed}" is offered by ${other === pool.name ? `upstream "${other}" twice` : `upstreams "${other}" and "${pool.name}"`}`);
          seen.set(exposed, pool.name);
          // Too long is not a problem: such a name is shortened (tools.maxToolNameLength).
          // A name the endpoint's curation renames is exposed by its rename (a tenant's own rename keeps it for that tenant alone).
          if (kind.key === 'tools' && !this.tools.curationFor('').listable(exposed)) problems.push(`tool "${exposed}" breaks the MCP name rule (only [A-Za-z0-9_.-]) and is left out`);
        }
      }
    }
    return problems;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#sessions.values()].map((s) => s.close()));
    for (const d of this.#detach) d();
  }
}
