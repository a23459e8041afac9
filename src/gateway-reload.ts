import { ConfigError, type LoadedConfig } from './config/load.js';
import { diffConfig, effectiveProblems, type ConfigDiff, type NamedChanges } from './config/config-diff.js';
import { messagesPathOf, type Config, type EndpointConfig } from './config/schema.js';
import type { ReloadableEdgeAuth } from './edge-auth.js';
import type { Gateway } from './gateway.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import type { SessionGuard } from './policy/index.js';
import type { EndpointRouter, RouterSession } from './router/index.js';
import type { UpstreamInstance, UpstreamPool } from './upstream/index.js';

/** What a reload did, as the admin API answers and the log says it. */
export interface ReloadReport {
  /** applied: something changed; unchanged: nothing to do; invalid: nothing changed (see problems); failed: an error while applying. */
  result: 'applied' | 'unchanged' | 'invalid' | 'failed';
  /** Every problem of an invalid file, each with its path. */
  problems: string[];
  warnings: string[];
  changes?: { upstreams: NamedChanges; endpoints: NamedChanges; tenants: NamedChanges; auth: boolean; admin: boolean };
  /** Settings that differ in the file but need a restart: left as they were. */
  restartRequired: string[];
  /** Sessions ended because their tenant lost the endpoint (or is gone). */
  sessionsEnded: number;
}

/** How the retired upstreams went: each drained within the grace period, or with calls cut. */
export interface DrainReport {
  upstreams: Array<{ name: string; cutCalls: number }>;
}

export interface ReloadOutcome {
  report: ReloadReport;
  /** Resolves once removed and replaced upstreams have finished their calls (or the grace ran out) and stopped. */
  drained: Promise<DrainReport>;
}

export interface ReloaderParts {
  gateway: Gateway;
  auth: ReloadableEdgeAuth;
  logger: Logger;
  metrics: Metrics;
  /** Reads and fully validates the config (check-config's checks); throws a ConfigError. */
  read: () => LoadedConfig;
}

const NOTHING_DRAINED: Promise<DrainReport> = Promise.resolve({ upstreams: [] });
const STOPPING: ReloadOutcome = { report: { result: 'failed', problems: ['the gateway is shutting down: nothing was reloaded'], warnings: [], restartRequired: [], sessionsEnded: 0 }, drained: NOTHING_DRAINED };
const LIST_CHANGED = ['notifications/tools/list_changed', 'notifications/prompts/list_changed', 'notifications/resources/list_changed'];

/** Sessions a reload ends on an endpoint it keeps: its legacy SSE ones, its 2025 ones, or its 2026-07-28 standings. */
type Ending = { router: EndpointRouter; which: 'sse' | 'legacy'; reason: string } | { router: EndpointRouter; which: 'modern' };

/**
 * What a change of an endpoint ends of its sessions, read before its router takes the new config: an era
 * switched off, that era's (the endpoint would no longer answer them); else, a moved SSE path, the
 * legacy SSE sessions (the message URL they were given is gone; their client opens a new stream).
 */
function endingOn(router: EndpointRouter, next: EndpointConfig): Ending[] {
  const off = (era: 'legacy' | 'modern') => router.config.eras.includes(era) && !next.eras.includes(era);
  const out: Ending[] = [];
  if (off('legacy')) out.push({ router, which: 'legacy', reason: 'this endpoint no longer serves the 2025 era (config reload): send 2026-07-28 requests' });
  else if (messagesPathOf(next) !== messagesPathOf(router.config)) out.push({ router, which: 'sse', reason: 'the legacy SSE path of this endpoint moved (config reload): open a new stream' });
  if (off('modern')) out.push({ router, which: 'modern' });
  return out;
}

/**
 * Applies a new config to a running gateway as a diff (config-diff.ts): new and replaced upstreams are
 * started before any request can reach them, then everything a request reads (pools, endpoints,
 * tenants, token verification) is swapped in one synchronous step, then the old pools drain. One
 * reload at a time: a second one waits for the first.
 */
export class ConfigReloader {
  readonly #p: ReloaderParts;
  readonly #log: Logger;
  #queue: Promise<unknown> = Promise.resolve();
  #generation = 0;
  #reloaded: (() => void) | undefined;
  /** The gateway is stopping: a reload would start pools that nothing stops any more. */
  #stopped = false;
  /** The pools the running reload is starting (new ones, not yet listed, and kept ones woken): a stop ends their start (see stop). */
  readonly #starting = new Set<UpstreamPool>();

  constructor(parts: ReloaderParts) {
    this.#p = parts;
    this.#log = parts.logger.child({ component: 'reload' });
  }

  /**
   * How many reloads have been applied or found unchanged: what was built from the config once (a
   * verifier's keys, read from files that may hold new keys under the same names) is rebuilt when it moves.
   */
  get generation(): number {
    return this.#generation;
  }

  /** Reads the file again and applies it. `trigger` is for the log (SIGHUP, watch, api). */
  reload(trigger: string): Promise<ReloadOutcome> {
    const run = this.#serial(() => this.#reload(trigger));
    void run.then(() => this.#reloaded?.(), () => {});
    return run;
  }

  /** Told after each reload, whatever its result: the file watch follows the key files of the config in force. */
  onReloaded(fn: () => void): void {
    this.#reloaded = fn;
  }

  /**
   * Replaces one upstream's pool by a fresh one, as a reload that changed it would (restart from the admin
   * API). Undefined when, its turn come, no such upstream is configured: a reload queued before it may
   * have removed the upstream it was asked for (restarting it threw a TypeError, answered as a failed reload).
   */
  restartUpstream(name: string): Promise<ReloadOutcome | undefined> {
    return this.#serial(async () => {
      const current = this.#p.gateway.config;
      if (!current.upstreams.some((u) => u.name === name) || !this.#p.gateway.pools.has(name)) {
        this.#log.info({ upstream: name }, 'restart skipped: the upstream is not configured (any more)');
        return undefined;
      }
      const diff = diffConfig(current, current);
      diff.upstreams = { ...diff.upstreams, changed: [name], unchanged: diff.upstreams.unchanged.filter((n) => n !== name) };
      const uses = new Set(current.endpoints.filter((e) => e.upstreams.includes(name)).map((e) => e.path));
      diff.endpoints = { ...diff.endpoints, changed: [...uses], unchanged: diff.endpoints.unchanged.filter((p) => !uses.has(p)) };
      diff.empty = false;
      this.#log.info({ upstream: name }, 'restarting an upstream: a fresh pool is started, the old one drains');
      return this.#apply(diff, [], 'restart');
    });
  }

  /**
   * No reload or restart from now on, and the one running (if any) done: the gateway is stopping. One
   * that came during the drain (SIGHUP, the admin API, the file watch) started pools after stop() had
   * stopped the old ones, and their processes outlived the gateway.
   */
  stop(): Promise<void> {
    this.#stopped = true;
    // Waiting for them to start would hold the stop up to their initTimeoutMs (30 s by default: past its
    // grace, and past an orchestrator's SIGKILL) for an upstream that does not answer: closed now, the
    // reload fails (changing nothing) and the stop goes on.
    for (const p of this.#starting) void p.close().catch(() => {});
    return this.#queue.then(() => {});
  }

  #serial<T extends ReloadOutcome | undefined>(fn: () => Promise<T>): Promise<T | ReloadOutcome> {
    const guarded = (): Promise<T | ReloadOutcome> => (this.#stopped ? Promise.resolve(STOPPING) : fn());
    const run = this.#queue.then(guarded, guarded);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #reload(trigger: string): Promise<ReloadOutcome> {
    let loaded: LoadedConfig;
    try {
      loaded = this.#p.read();
    } catch (err) {
      return this.#invalid(trigger, err instanceof ConfigError ? err.problems : [(err as Error).message]);
    }
    // Logged as a start logs them: a SIGHUP or the file watch has nobody reading the report (a file that
    // opens the admin API to the stdio servers sharing the gateway's network was applied unsaid).
    for (const w of loaded.warnings) this.#log.warn({ trigger }, `config: ${w}`);
    const diff = diffConfig(this.#p.gateway.config, loaded.config, this.#p.gateway.pins !== undefined);
    const blocked = effectiveProblems(diff);
    if (blocked.length > 0) return this.#invalid(trigger, blocked);
    for (const r of diff.restartRequired) this.#log.warn({ trigger }, `config reload: ${r}`);
    return this.#apply(diff, loaded.warnings, trigger);
  }

  #invalid(trigger: string, problems: string[]): ReloadOutcome {
    this.#p.metrics.configReloads.inc({ result: 'invalid' });
    this.#log.error({ trigger, problems }, 'config reload refused: the file is invalid; nothing changed');
    return { report: { result: 'invalid', problems, warnings: [], restartRequired: [], sessionsEnded: 0 }, drained: NOTHING_DRAINED };
  }

  async #apply(diff: ConfigDiff, warnings: string[], trigger: string): Promise<ReloadOutcome> {
    const base = { problems: [], warnings, restartRequired: diff.restartRequired };
    const changes = { upstreams: diff.upstreams, endpoints: diff.endpoints, tenants: diff.tenants, auth: diff.auth, admin: diff.admin };
    // Key files may hold new keys under the same names: verification is rebuilt on every reload.
    this.#generation++;
    if (diff.empty) {
      try {
        this.#p.auth.prepare(this.#p.gateway.config)();
      } catch (err) {
        // The key files in force, unreadable now (not checked with the file: a restart-only auth change
        // leaves them in force). Thrown, it rejected reload(), which SIGHUP and the watch do not await.
        return this.#failed(err, base, trigger, NOTHING_DRAINED);
      }
      this.#p.metrics.configReloads.inc({ result: 'unchanged' });
      this.#log.info({ trigger, restartRequired: diff.restartRequired.length }, 'config reload: nothing to apply');
      return { report: { ...base, result: 'unchanged', changes, sessionsEnded: 0 }, drained: NOTHING_DRAINED };
    }
    const drainingBefore = new Set(this.#p.gateway.draining);
    try {
      const { retired, rebinding, added, removed, ending, sessionsEnded: retargeted } = await this.#swap(diff);
      const stale = await this.#rebind(rebinding);
      for (const r of this.#p.gateway.routers) if (diff.endpoints.changed.includes(r.config.path)) void r.prepareTools();
      const sessionsEnded = retargeted + (await this.#settleEndpoints(added, removed, ending));
      this.#p.metrics.configReloads.inc({ result: 'applied' });
      this.#log.info({ trigger, ...summary(changes), sessionsEnded, restartRequired: diff.restartRequired }, 'config reloaded');
      const grace = diff.effective.admin.drainGraceMs;
      return { report: { ...base, result: 'applied', changes, sessionsEnded }, drained: this.#drain(retired, stale, grace) };
    } catch (err) {
      const left = this.#leftBehind(drainingBefore);
      return this.#failed(err, base, trigger, left.length > 0 ? this.#drain(left, [], diff.effective.admin.drainGraceMs) : NOTHING_DRAINED);
    }
  }

  /**
   * Each session of a changed endpoint moves to the new pools (their stale leases returned to drain). After
   * the swap the config is in force: one session that cannot move (logged) must not fail the reload, which
   * left what follows the swap undone (removed endpoints' sessions open, the report "failed").
   */
  async #rebind(sessions: readonly RouterSession[]): Promise<Array<{ pool: UpstreamPool; inst: UpstreamInstance }>> {
    const settled = await Promise.allSettled(sessions.map((s) => s.rebind()));
    return settled.flatMap((r) => {
      if (r.status === 'fulfilled') return r.value;
      this.#log.warn({ err: (r.reason as Error).message }, 'config reload: a session could not move to the new upstreams; its calls to them fail');
      return [];
    });
  }

  #failed(err: unknown, base: Pick<ReloadReport, 'warnings' | 'restartRequired'>, trigger: string, drained: Promise<DrainReport>): ReloadOutcome {
    this.#p.metrics.configReloads.inc({ result: 'failed' });
    this.#log.error({ trigger, err }, 'config reload failed while applying');
    return { report: { ...base, result: 'failed', problems: [(err as Error).message], sessionsEnded: 0 }, drained };
  }

  /**
   * The pools a failed reload took out of service before it failed (after its swap): retired as a
   * reload that went through retires them, else nothing stops their processes. One an endpoint still
   * serves from (the failure came before that endpoint was reconfigured) keeps serving, listed as draining.
   * Defensive: the one failure after the swap that a config could cause (hidden-text patterns that compile
   * alone but not joined, thrown by a new endpoint's router) is refused by validation now, so no test
   * provokes this path with real parts any more.
   */
  #leftBehind(drainingBefore: ReadonlySet<UpstreamPool>): UpstreamPool[] {
    const g = this.#p.gateway;
    return [...g.draining].filter((p) => !drainingBefore.has(p) && !g.routers.some((r) => r.pools.includes(p)));
  }

  /**
   * Starts the new pools (warm spares ready before they are listed), then swaps everything requests
   * read, with no await in between: the next request sees all of the new config or none of it.
   */
  async #swap(diff: ConfigDiff): Promise<{ retired: UpstreamPool[]; rebinding: RouterSession[]; added: EndpointRouter[]; removed: EndpointRouter[]; ending: Ending[]; sessionsEnded: number }> {
    const g = this.#p.gateway;
    const eff = diff.effective;
    const used = new Set(eff.endpoints.flatMap((e) => e.upstreams));
    const usedBefore = new Set(g.config.endpoints.flatMap((e) => e.upstreams));
    // What can fail is done before anything changes: the token verification (its key files), the new pools' start.
    const useAuth = this.#p.auth.prepare(eff);
    const fresh = [...diff.upstreams.added, ...diff.upstreams.changed].map((name) => g.newPool(eff, name));
    // Kept pools that no endpoint used and a new endpoint now uses start too (a pool started once before,
    // used and then unused, keeps the instances it has: UpstreamPool.start runs once per pool).
    const woken = [...g.pools.values()].filter((p) => used.has(p.name) && !usedBefore.has(p.name) && !diff.upstreams.changed.includes(p.name));
    for (const p of [...fresh, ...woken]) this.#starting.add(p);
    try {
      await Promise.all([...fresh.filter((p) => used.has(p.name)), ...woken].map((p) => p.start()));
      if (this.#stopped) throw new Error('the gateway is shutting down');
      refuseBroken(fresh.filter((p) => diff.upstreams.changed.includes(p.name) && used.has(p.name)), g.pools);
    } catch (err) {
      await Promise.all(fresh.map((p) => p.close().catch(() => {}))); // never listed: nothing else would stop them
      throw err;
    } finally {
      this.#starting.clear();
    }
    // From here to the end: synchronous.
    const retired = [...diff.upstreams.removed, ...diff.upstreams.changed].map((n) => g.pools.get(n)!);
    for (const p of retired) g.draining.add(p); // listed there from the moment they leave g.pools (metrics count them)
    for (const n of diff.upstreams.removed) g.pools.delete(n);
    for (const p of fresh) g.pools.set(p.name, p);
    g.policy.replace(eff);
    g.pins?.reconfigure(eff);
    useAuth();
    g.config = Object.freeze(eff);
    const rebinding: RouterSession[] = [];
    const ending: Ending[] = [];
    for (const r of g.routers) {
      if (!diff.endpoints.changed.includes(r.config.path)) continue;
      const next = eff.endpoints.find((e) => e.path === r.config.path)!;
      ending.push(...endingOn(r, next));
      rebinding.push(...r.reconfigure(next, g.pools));
      g.modern.sessions.reconfigured(r);
    }
    // The edge serves the new endpoints, and no longer finds removed ones, from the next request on.
    const { added, removed } = g.setEndpoints(
      eff.endpoints.filter((e) => diff.endpoints.added.includes(e.path)),
      diff.endpoints.removed,
    );
    return { retired, rebinding, added, removed, ending, sessionsEnded: this.#retarget() };
  }

  /**
   * After the swap: sessions of removed endpoints end (both eras) and their routers close; those a kept
   * endpoint's change ends (endingOn) end too; new endpoints check their catalogue and prepare tools.
   */
  async #settleEndpoints(added: EndpointRouter[], removed: EndpointRouter[], ending: Ending[]): Promise<number> {
    const g = this.#p.gateway;
    for (const r of added) {
      void (async () => {
        for (const problem of await r.checkCatalogue()) this.#log.warn({ endpoint: r.config.path }, `name conflict: ${problem}`);
        await r.prepareTools();
      })().catch((err: Error) => this.#log.warn({ endpoint: r.config.path, err: err.message }, 'a new endpoint could not list its upstreams yet'));
    }
    const ended = await g.retireEndpoints(removed, 'the endpoint was removed by a config reload');
    const closing: Array<Promise<unknown>> = [];
    for (const e of ending) {
      if (e.which === 'modern') {
        for (const s of g.modern.sessions.list()) if (s.endpoint === e.router) closing.push(g.modern.sessions.end(s.id));
        continue;
      }
      for (const { session } of g.registry.list()) {
        if (session.endpoint === e.router && (e.which === 'legacy' || session.kind === 'sse')) closing.push(session.close(e.reason));
      }
    }
    await Promise.all(closing);
    return ended + closing.length;
  }

  /**
   * Every session's guard follows its tenant's new settings; a session whose tenant is gone or no longer
   * granted its endpoint ends. Sessions whose rules changed re-list (they may show other tools).
   */
  #retarget(): number {
    const g = this.#p.gateway;
    let ended = 0;
    const follow = (guard: SessionGuard, path: string, notify: (m: string) => void, end: () => Promise<unknown>) => {
      const t = g.policy.tenant(guard.principal);
      if (!t || !t.mayUseEndpoint(path)) {
        ended++;
        void end().catch(() => {});
        return;
      }
      // A tenant whose settings did not change keeps its policy object (Policy.replace): another one means
      // other rules, a tenant the file changed or one it named or stopped naming ("anonymous" with auth off).
      if (t === guard.tenant) return;
      guard.retarget(t);
      for (const m of LIST_CHANGED) notify(m);
    };
    // Sessions of removed endpoints are ended after the swap (#settleEndpoints), not here.
    const live = new Set(g.routers);
    for (const { session: s } of g.registry.list()) {
      if (!live.has(s.endpoint)) continue;
      follow(s.guard, s.endpoint.config.path, (m) => s.clientNotify(m, undefined), () => s.close('config reload: the tenant may no longer use this endpoint'));
    }
    for (const s of g.modern.sessions.list()) if (live.has(s.endpoint)) follow(s.guard, s.endpoint.config.path, (m) => s.clientNotify(m, undefined), () => g.modern.sessions.end(s.id));
    return ended;
  }

  /** Retired pools finish their calls (up to the grace period) and stop; stale leases of live pools are handed back the same way. */
  async #drain(retired: UpstreamPool[], stale: Array<{ pool: UpstreamPool; inst: UpstreamInstance }>, graceMs: number): Promise<DrainReport> {
    const gone = new Set(retired);
    const leases = stale.filter((l) => !gone.has(l.pool)).map(async (l) => {
      const deadline = Date.now() + graceMs;
      while (l.inst.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await l.pool.release(l.inst);
    });
    const upstreams = await Promise.all(
      retired.map(async (pool) => {
        const cutCalls = await pool.retire(graceMs);
        this.#p.gateway.draining.delete(pool);
        (cutCalls > 0 ? this.#log.warn.bind(this.#log) : this.#log.info.bind(this.#log))({ upstream: pool.name, cutCalls }, 'retired upstream drained and stopped');
        return { name: pool.name, cutCalls };
      }),
    );
    await Promise.all(leases);
    return { upstreams };
  }
}

function summary(c: NonNullable<ReloadReport['changes']>): Record<string, unknown> {
  const moved = (n: NamedChanges) => ({ added: n.added, removed: n.removed, changed: n.changed });
  return { upstreams: moved(c.upstreams), endpoints: moved(c.endpoints), tenants: moved(c.tenants), auth: c.auth };
}

/**
 * A changed (or restarted) upstream whose fresh pool did not come up while the pool in force serves:
 * swapping it in would turn a working upstream into a broken one (a typo in a command, a wrong URL or
 * credential), so the reload fails and changes nothing, and says why. Only a pool with readiness of its
 * own (shared instances) can tell; a new upstream that does not start breaks nothing that worked.
 */
function refuseBroken(fresh: readonly UpstreamPool[], inForce: ReadonlyMap<string, UpstreamPool>): void {
  for (const p of fresh) {
    if (p.ready || !inForce.get(p.name)?.ready) continue;
    const why = [...p.instances].map((i) => i.lastFailure).find((f) => f !== undefined) ?? 'no instance became ready';
    throw new Error(`upstream "${p.name}": its new configuration did not start (${why}); the one in force keeps serving`);
  }
}

/** The config a reader of the file would get, for callers that already hold one (tests, restarts). */
export function fixedReader(config: Config): () => LoadedConfig {
  return () => ({ config, warnings: [] });
}
