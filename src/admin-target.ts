import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { GatewayError } from './errors.js';
import { modernEnded, pendingRows, storedSessionRow, type AdminCredentials, type AdminTarget, type EndedSession, type InstanceRow, type LinkFilter, type LinkRow, type PinChangeRow, type PinDecision, type ReplicaAnswers, type SessionRow, type TenantRow, type UpstreamRow } from './admin/admin-target.js';
import { pollReplicasAudit } from './admin/audit-poll.js';
import { AuditRing } from './admin/audit-ring.js';
import { lineDiff } from './admin/line-diff.js';
import { firstAfter, isPage, linkKey, pinKey, pinUpstreams, sessionKey, type PageRequest } from './admin/paging.js';
import { ADMIN_TOKEN_MIN_LENGTH } from './config/admin-schema.js';
import { redactConfig } from './config/redact.js';
import { AdminJwtCheck } from './edge-auth.js';
import type { Gateway } from './gateway.js';
import type { ConfigReloader, ReloadOutcome } from './gateway-reload.js';
import { canonicalJson } from './policy/tool-pin-hash.js';
import type { UpstreamPool } from './upstream/index.js';

/** A definition as indented JSON lines with sorted keys, so that the diff shows what changed, not key order. */
function lines(def: Readonly<Record<string, unknown>> | undefined): string[] {
  return def === undefined ? [] : JSON.stringify(JSON.parse(canonicalJson(def)), null, 2).split('\n');
}

function instances(pool: UpstreamPool): InstanceRow[] {
  return [...pool.instances].map((i) => ({ pid: i.pid ?? null, state: i.state, circuit: i.circuit, inflight: i.inflight, backoffAttempt: i.backoffAttempt, lastError: i.lastFailure ?? null }));
}

/** Where a replica that does not answer is reported (the gateway's logger). */
interface WarnLog {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** The admin API over the running gateway (src/admin/ knows only the AdminTarget interface). */
export class GatewayAdmin implements AdminTarget {
  readonly replica: string;
  readonly #g: Gateway;
  readonly #reloader: ConfigReloader;
  readonly #logger: WarnLog;
  /** The audit lines other replicas' consoles read from this one. */
  readonly #auditRing: AuditRing;
  /** The admin API's JWT check, built again after every reload (as the edge's is). */
  readonly #jwt: AdminJwtCheck;
  #tokenFileSaid: string | undefined; // what was last logged of an unusable admin.tokenFile (undefined: usable)

  constructor(gateway: Gateway, reloader: ConfigReloader, logger: WarnLog, keySets?: ConstructorParameters<typeof AdminJwtCheck>[1]) {
    this.#g = gateway;
    this.#reloader = reloader;
    this.#logger = logger;
    this.#jwt = new AdminJwtCheck(logger, keySets);
    this.replica = gateway.cluster?.replicaId ?? hostname();
    this.#auditRing = new AuditRing((listener) => this.#g.audit?.tail(listener));
  }

  credentials(): AdminCredentials {
    const c = this.#g.config;
    const token = c.admin.token ?? (c.admin.tokenFile === undefined ? undefined : this.#fileToken(c.admin.tokenFile));
    const generation = this.#reloader.generation;
    if (c.auth.mode !== 'jwt') return { token, scope: c.admin.scope, verifyJwt: undefined, generation };
    return { token, scope: c.admin.scope, verifyJwt: this.#jwt.verifier(c, generation), generation };
  }

  /**
   * admin.tokenFile, read on each request (so a rotated file takes effect at once). One that cannot be read
   * refuses the request: a 500 that says so without the file's path (the log has it, once), never an open API.
   */
  #fileToken(path: string): string {
    let token: string;
    try {
      token = readFileSync(path, 'utf8').trim();
    } catch (err) {
      this.#tokenFileProblem(`admin.tokenFile cannot be read (${(err as Error).message}): every admin request is refused until it can`, path);
      throw new GatewayError('SWB_CONFIG_INVALID', 'the admin API cannot check credentials: its token file cannot be read (see the gateway log)');
    }
    // Held to admin.token's minimum: taken as it came, a file holding "admin" was a guessable token.
    if (token.length < ADMIN_TOKEN_MIN_LENGTH) {
      this.#tokenFileProblem(`admin.tokenFile holds fewer than ${ADMIN_TOKEN_MIN_LENGTH} characters: every admin request is refused until it holds a longer token (openssl rand -base64 32)`, path);
      throw new GatewayError('SWB_CONFIG_INVALID', 'the admin API cannot check credentials: its token file holds no usable token (see the gateway log)');
    }
    if (this.#tokenFileSaid !== undefined) this.#logger.info({ path }, 'admin.tokenFile holds a usable token again: admin requests are checked against it');
    this.#tokenFileSaid = undefined;
    return token;
  }

  /** Logged once until it changes: read for every request, a warning each let anyone reaching the port write the log. */
  #tokenFileProblem(message: string, path: string): void {
    if (this.#tokenFileSaid !== message) this.#logger.warn({ path }, (this.#tokenFileSaid = message));
  }

  /**
   * Every session of the cluster: this replica's, each other replica's as it reports them (with what only
   * the holder knows: in flight, modern sessions), and, from the store, those whose holder did not answer
   * (dead, or too slow) with what their record says.
   */
  async sessions(page?: PageRequest): Promise<SessionRow[]> {
    const rows = page ? firstAfter(this.#localSessions(), sessionKey, page) : this.#localSessions();
    if (!this.#g.cluster) return rows;
    // A page's worth from each (a replica on an older release answers all of its own: cut here).
    const [answers, stored] = await Promise.all([this.#ask('sessions', page), this.#g.cluster.storedSessions(page)]);
    for (const [replica, answer] of answers) if (Array.isArray(answer)) rows.push(...(answer as SessionRow[]).map((r) => ({ ...r, replica })));
    const listed = new Set(rows.map((s) => s.id));
    const now = Date.now();
    for (const s of stored) if (!listed.has(s.record.id)) rows.push(storedSessionRow(s, now));
    return page ? firstAfter(rows, sessionKey, page) : rows;
  }

  #localSessions(): SessionRow[] {
    const now = Date.now();
    const legacy = this.#g.registry.list().map(({ session: s, openedAt }) => ({
      id: s.id,
      replica: this.replica,
      replicaAlive: true,
      era: 'legacy' as const,
      transport: s.kind,
      protocolVersion: s.protocolVersion ?? null,
      issuer: s.principal.issuer,
      subject: s.principal.subject,
      tenant: s.tenant,
      endpoint: s.endpoint.config.path,
      ageSeconds: (now - openedAt) / 1000,
      openedAt: new Date(openedAt).toISOString(),
      inflight: s.inflight,
    }));
    const modern = this.#g.modern.sessions.list().map((s) => ({
      id: s.id,
      replica: this.replica,
      replicaAlive: true,
      era: 'modern' as const,
      transport: 'modern' as const,
      protocolVersion: '2026-07-28',
      issuer: s.principal.issuer,
      subject: s.principal.subject,
      tenant: s.tenant,
      endpoint: s.endpoint.config.path,
      ageSeconds: (now - s.openedAt) / 1000,
      openedAt: new Date(s.openedAt).toISOString(),
      inflight: s.inflight,
    }));
    return [...legacy, ...modern];
  }

  async endSession(id: string): Promise<EndedSession | undefined> {
    const s = this.#g.registry.get(id);
    if (s) {
      await s.close('ended by an operator (admin API)');
      return { id, endedBy: this.replica, holder: this.replica };
    }
    if (await this.#g.modern.sessions.end(id)) return { id, endedBy: this.replica, holder: this.replica };
    const elsewhere = await this.#g.cluster?.endElsewhere(id);
    if (elsewhere) return { id, ...elsewhere };
    // A 2026-07-28 standing lives on its replica alone, with no record in the store: its holder is asked.
    // One that answered with an error or did not answer in time may be the holder: not a 404.
    return modernEnded(id, await this.#askEach('end-modern', id));
  }

  async upstreams(): Promise<UpstreamRow[]> {
    const rows = this.#localUpstreams();
    for (const [replica, answer] of await this.#ask('upstreams')) if (Array.isArray(answer)) rows.push(...(answer as UpstreamRow[]).map((r) => ({ ...r, replica })));
    return rows;
  }

  /** The pools in force and, marked, those a reload took out of service that still run their processes. */
  #localUpstreams(): UpstreamRow[] {
    const c = this.#g.config;
    const row = (p: UpstreamPool, draining: boolean, endpoints: string[]): UpstreamRow => ({
      replica: this.replica,
      name: p.name,
      transport: p.config.transport,
      sharing: p.config.sharing,
      ready: p.ready,
      draining,
      restarts: p.restarts,
      queued: p.waiting,
      inflight: p.inflight,
      endpoints,
      instances: instances(p),
    });
    const live = [...this.#g.pools.values()].map((p) => row(p, false, c.endpoints.filter((e) => e.upstreams.includes(p.name)).map((e) => e.path)));
    // Their endpoints: those still routing to them (none once a reload went through).
    const draining = [...this.#g.draining].map((p) => row(p, true, this.#g.routers.filter((r) => r.pools.includes(p)).map((r) => r.config.path)));
    return [...live, ...draining];
  }

  /** Restarts the upstream here and, with Redis, on every other replica that runs it (`replicas`: each one's report). */
  async restartUpstream(name: string): Promise<Record<string, unknown> | undefined> {
    if (!this.#g.pools.has(name)) return undefined;
    // Gone by the restart's turn (a reload removed it): as unknown as it was never there.
    const outcome = await this.#reloader.restartUpstream(name);
    return outcome && this.#everywhere(reportOf(outcome), 'restart', name);
  }

  async pins(page?: PageRequest): Promise<PinChangeRow[] | undefined> {
    const pins = this.#g.pins;
    if (!pins) return undefined;
    // The definitions of a page's rows only.
    const rows = page ? await this.#pinPage(page) : await this.#pendingPins([...this.#g.pools.keys()]);
    // A definition is known to the replicas that saw it: the ones this replica did not see are asked for.
    const known = new Map<string, Record<string, unknown>>();
    const wanted = new Set<string>();
    for (const r of rows) {
      for (const hash of [r.approvedHash, r.pendingHash]) {
        const d = hash === null ? undefined : pins.definition(hash);
        if (d) known.set(hash!, d);
        else if (hash !== null) wanted.add(hash);
      }
    }
    if (wanted.size > 0) {
      for (const found of (await this.#ask('definitions', [...wanted])).values()) {
        if (found && typeof found === 'object') for (const [hash, d] of Object.entries(found)) if (wanted.has(hash) && d && typeof d === 'object') known.set(hash, d as Record<string, unknown>);
      }
    }
    for (const r of rows) {
      const old = r.approvedHash === null ? undefined : known.get(r.approvedHash);
      const now = known.get(r.pendingHash);
      Object.assign(r, { old: old ?? null, new: now ?? null, diff: lineDiff(lines(old), lines(now)) });
    }
    return rows;
  }

  /**
   * A page of pending changes: the upstreams in key order (pinUpstreams), each one's pins read in full
   * until the page is full. An upstream's pins are two Redis hashes keyed by tool, which give no order
   * to read a part of them by; what bounds the read is MAX_TOOLS_PER_UPSTREAM (1000 names recorded per
   * upstream), so a page reads at most that many per upstream it reaches, not every upstream's.
   */
  async #pinPage(page: PageRequest): Promise<PinChangeRow[]> {
    const rows: PinChangeRow[] = [];
    for (const u of pinUpstreams([...this.#g.pools.keys()], page.after)) {
      rows.push(...(await this.#pendingPins([u])));
      // Every later upstream's pins come after these: the first limit + 1 are known.
      if (firstAfter(rows, pinKey, page).length > page.limit) break;
    }
    return firstAfter(rows, pinKey, page);
  }

  async #pendingPins(upstreams: string[]): Promise<PinChangeRow[]> {
    return pendingRows(await this.#g.pins!.store.table(upstreams));
  }

  async approvePins(upstream: string, tools: ReadonlyArray<{ tool: string; hash: string }>): Promise<PinDecision[] | undefined> {
    const pins = this.#g.pins;
    if (!pins || !this.#g.pools.has(upstream)) return undefined;
    const fixed = new Set(Object.keys(Object.hasOwn(this.#g.config.pinning.pins, upstream) ? this.#g.config.pinning.pins[upstream]! : {}));
    const done = new Set((await pins.store.approve(upstream, tools.filter((t) => !fixed.has(t.tool)))).map((p) => p.tool));
    return tools.map((t) => ({ tool: t.tool, outcome: fixed.has(t.tool) ? 'pinned-in-config' : done.has(t.tool) ? 'approved' : 'not-pending' }));
  }

  async rejectPins(upstream: string, tools: ReadonlyArray<{ tool: string; hash: string }>): Promise<PinDecision[] | undefined> {
    const pins = this.#g.pins;
    if (!pins || !this.#g.pools.has(upstream)) return undefined;
    // A config pin's pending change may be rejected too: it leaves the queue; the config still decides.
    const done = new Set((await pins.store.reject(upstream, tools)).map((p) => p.tool));
    return tools.map((t) => ({ tool: t.tool, outcome: done.has(t.tool) ? 'rejected' : 'not-pending' }));
  }

  async tenants(): Promise<TenantRow[]> {
    const byReplica = new Map<string, Record<string, Usage>>([[this.replica, this.#localUsage()]]);
    for (const [replica, answer] of await this.#ask('usage')) if (answer && typeof answer === 'object') byReplica.set(replica, answer as Record<string, Usage>);
    // Configured tenants, and one in use that is not configured but served (auth off: "anonymous").
    const policies = this.#g.policy.tenants();
    const named = new Set(policies.map((t) => t.name));
    for (const tenants of byReplica.values()) {
      for (const name of Object.keys(tenants)) {
        const open = named.has(name) ? undefined : this.#g.policy.tenant({ tenant: name });
        if (open && !named.has(open.name)) (named.add(open.name), policies.push(open));
      }
    }
    return policies.map((t) => {
      const usage: Usage = { sessions: 0, inflight: 0 };
      const per: Record<string, Usage> = {};
      for (const [replica, tenants] of byReplica) {
        const u = Object.hasOwn(tenants, t.name) ? tenants[t.name]! : { sessions: 0, inflight: 0 };
        per[replica] = { sessions: u.sessions, inflight: u.inflight };
        usage.sessions += u.sessions;
        usage.inflight += u.inflight;
      }
      return { name: t.name, endpoints: t.config.endpoints, limits: t.config.limits, usage, byReplica: per };
    });
  }

  /** Sessions and requests in flight per tenant on this replica. */
  #localUsage(): Record<string, Usage> {
    // Keyed by tenant name, which may be "constructor" or "__proto__": no inherited members to count onto.
    const usage = Object.create(null) as Record<string, Usage>;
    const count = (tenant: string, inflight: number) => {
      const u = (usage[tenant] ??= { sessions: 0, inflight: 0 });
      u.sessions++;
      u.inflight += inflight;
    };
    for (const { session } of this.#g.registry.list()) count(session.tenant, session.inflight);
    for (const s of this.#g.modern.sessions.list()) count(s.tenant, s.inflight);
    return usage;
  }

  async links(filter: LinkFilter, page?: PageRequest): Promise<LinkRow[] | undefined> {
    const vault = this.#g.consent?.vault;
    if (!vault) return undefined;
    // A filter naming one user reads only theirs; otherwise a page's worth, in order (Redis: its ordered index).
    const oneUser = filter.issuer !== undefined && filter.subject !== undefined && filter.tenant !== undefined;
    if (!page || oneUser) return page ? firstAfter(await vault.links(filter), linkKey, page) : vault.links(filter);
    return vault.linksAfter(filter, page.after, page.limit + 1);
  }

  async revokeLinks(filter: LinkFilter & { subject: string; upstream: string }): Promise<LinkRow[] | undefined> {
    const consent = this.#g.consent;
    if (!consent) return undefined;
    const found = await consent.vault.links(filter);
    for (const l of found) await consent.revoke(l.upstream, l, 'operator');
    return found;
  }

  config(): unknown {
    return redactConfig(this.#g.config);
  }

  /**
   * This replica's audit lines as they are written and, with Redis, every other replica's, read from
   * their rings (AuditRing) once a second; each line names its replica.
   */
  tailAudit(listener: (line: Readonly<Record<string, unknown>>) => void): (() => void) | undefined {
    const untail = this.#g.audit?.tail((line) => listener({ ...line, replica: this.replica }));
    const cluster = this.#g.cluster;
    if (!untail || !cluster) return untail;
    const unpoll = pollReplicasAudit((what, cursors, ms) => cluster.askReplicas(what, cursors, ms), listener, this.#logger, AUDIT_POLL_MS);
    return () => {
      unpoll();
      untail();
    };
  }

  async reload(): Promise<Record<string, unknown>> {
    // Each replica reloads its own file (a ConfigMap update reaches every one): the others are asked to.
    return this.#everywhere(reportOf(await this.#reloader.reload('admin API')), 'reload');
  }

  /**
   * This replica's report of an action and, with Redis, every other replica's report of the same action
   * (`replicas`, by replica id, this one included; `unansweredReplicas`: those that took it and did not answer).
   */
  async #everywhere(here: Record<string, unknown>, what: string, arg?: unknown): Promise<Record<string, unknown>> {
    if (!this.#g.cluster) return here;
    const replicas: Record<string, unknown> = { [this.replica]: here };
    const asked = await this.#g.cluster.askReplicas(what, arg, RELOAD_ANSWER_MS).catch((err: Error) => err);
    // Done here already: thrown, a reload that went through was answered as a failure (500).
    if (asked instanceof Error) return { ...here, replicas, replicasError: `the other replicas were not asked: ${asked.message}` };
    const { answers, unanswered } = asked;
    for (const [replica, a] of answers) replicas[replica] = a.error === undefined ? a.value : { error: a.error };
    return { ...here, replicas, ...(unanswered > 0 ? { unansweredReplicas: unanswered } : {}) };
  }

  /**
   * What other replicas' admin APIs ask this one (cluster.answerAdmin): its own upstreams, its tenants'
   * usage, a reload of its own file, the definitions it saw for pending pins, the end of a 2026-07-28 standing held here.
   */
  async answer(what: string, arg: unknown): Promise<unknown> {
    if (what === 'upstreams') return this.#localUpstreams();
    if (what === 'usage') return this.#localUsage();
    if (what === 'reload') return reportOf(await this.#reloader.reload('admin API of another replica'));
    if (what === 'sessions') return isPage(arg) ? firstAfter(this.#localSessions(), sessionKey, arg) : this.#localSessions();
    if (what === 'end-modern' && typeof arg === 'string') return this.#g.modern.sessions.end(arg);
    if (what === 'restart' && typeof arg === 'string') {
      const outcome = this.#g.pools.has(arg) ? await this.#reloader.restartUpstream(arg) : undefined;
      return outcome ? reportOf(outcome) : { result: 'absent' };
    }
    if (what === 'audit') return this.#auditRing.since(arg && typeof arg === 'object' ? (arg as Record<string, unknown>)[this.replica] : undefined) ?? { lines: [], next: 0, dropped: 0 };
    if (what === 'definitions' && Array.isArray(arg)) {
      const found: Record<string, unknown> = {};
      for (const hash of arg.slice(0, 1000)) if (typeof hash === 'string' && this.#g.pins?.definition(hash)) found[hash] = this.#g.pins.definition(hash);
      return found;
    }
    throw new Error(`unknown admin question "${what.slice(0, 40)}"`);
  }

  /** Every other replica's answer to `what`, by replica (none without Redis); one that did not answer, or failed, is logged. */
  async #ask(what: string, arg?: unknown): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    for (const [replica, a] of (await this.#askEach(what, arg)).answers) if (a.error === undefined) out.set(replica, a.value);
    return out;
  }

  /** Every other replica's answer or error, and how many took the question and did not answer in time; both logged. */
  async #askEach(what: string, arg?: unknown): Promise<ReplicaAnswers> {
    const asked = (await this.#g.cluster?.askReplicas(what, arg)) ?? { answers: new Map(), unanswered: 0 };
    for (const [replica, a] of asked.answers) if (a.error !== undefined) this.#logger.warn({ replica, what, err: a.error }, 'admin API: a replica could not answer');
    if (asked.unanswered > 0) this.#logger.warn({ what, unanswered: asked.unanswered }, 'admin API: replicas did not answer in time; their rows are missing');
    return asked;
  }
}

type Usage = { sessions: number; inflight: number };

/** How often a console's audit tail reads the other replicas' lines (and how long it waits for them). */
const AUDIT_POLL_MS = 1000;

/** Another replica's reload or restart may start upstreams and wait for their spares. */
const RELOAD_ANSWER_MS = 60_000;

function reportOf(o: ReloadOutcome): Record<string, unknown> {
  return { ...o.report };
}
