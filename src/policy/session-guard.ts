import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { ArgumentViolation } from './argument-rules.js';
import type { AuditEvent, AuditLog, ConfirmationOutcome } from './audit-log.js';
import type { ConfirmRule } from './confirm-rules.js';
import type { Decision } from './decision.js';
import { listOf, methodSpec, targetOf, type Target } from '../jsonrpc/methods.js';
import { prefixed } from '../jsonrpc/names.js';
import { RequestTable } from '../jsonrpc/request-table.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { LimitCounters } from './limit-counters.js';
import type { SessionSlots, SlotAnswer } from './session-slots.js';
import type { TenantPolicy } from './tenant-policy.js';
import { clipped } from '../observability/clipped.js';
import { withoutPassword } from '../observability/uri-password.js';
import { shownCompletion } from './completion-values.js';
import { shownContents } from './read-contents.js';
import { shownEmbedded } from './embedded-resources.js';

type Params = Record<string, unknown> | undefined;
type Result = Record<string, unknown>;

/** What a request reaches in the catalogue, when it reaches anything (read from the method table). */
export { targetOf };

/** A concurrent-request slot held: its counter key and the name of this acquisition (see LimitCounters). */
interface Held {
  key: string;
  slot: string;
}

/** Names of this process's acquisitions: unique among every process's (a restarted replica may keep its id). */
const SLOT_TAG = randomBytes(9).toString('base64url');
let slotSeq = 0;
const nextSlot = (): string => `${SLOT_TAG}.${++slotSeq}`;

/**
 * The longest name and URI an audit line carries, marked `…` when cut. The client chooses them (a call
 * to an unknown tool is audited too): uncut, every line could be as large as a request body, and the
 * audit ring and the console's batches keep hundreds of lines. MCP names are at most 128 characters;
 * URIs get the length browsers and servers commonly accept, as it is what tells resources apart.
 */
const MAX_NAME = 256;
const MAX_URI = 2048;

export const auditedName = (target: Target): string => (target.kind === 'resource' ? clipped(withoutPassword(target.name), MAX_URI) : clipped(target.name, MAX_NAME));

export interface GuardIds {
  session: string;
  endpoint: string;
  /**
   * The one upstream the endpoint shows unprefixed, if it does: its tools and prompts are also judged by
   * their prefixed names, which a tenant's patterns (written for the endpoints that prefix) may use.
   */
  unprefixed?: () => string | undefined;
}

/** Where a tenant's limits are counted (the Policy carries both). */
export interface LimitStores {
  counters: LimitCounters;
  slots: SessionSlots;
}

/**
 * What every guard of one session shares, whichever token's principal it judges by: the tenant (a
 * reload retargets them all at once), the limit stores and slots held, the audit trail.
 */
class GuardState {
  tenant: TenantPolicy;
  readonly counters: LimitCounters;
  readonly slots: SessionSlots;
  readonly audit: AuditLog | undefined;
  readonly ids: GuardIds;
  holdsSession = false;
  /**
   * The concurrent-request slots held, by request id, each with its counter key: released as taken,
   * whatever a reload did to the limit since. Made with the first slot (most tenants set no limit).
   */
  held: RequestTable<Held> | undefined;
  /**
   * Requests that gave their slot back while they wait on their client, by id: how many questions each
   * has open (0: its slot is being taken back). Made with the first such question.
   */
  waiting: RequestTable<number> | undefined;
  /** How long the session lives unused (0: no open 2025 session), and when its slot was last written to expire (this clock). */
  idleMs = 0;
  due = 0;

  constructor(tenant: TenantPolicy, stores: LimitStores, audit: AuditLog | undefined, ids: GuardIds) {
    this.tenant = tenant;
    this.counters = stores.counters;
    this.slots = stores.slots;
    this.audit = audit;
    this.ids = ids;
  }
}

/**
 * A session's policy, bound to its principal and tenant: what it may reach, what its lists show,
 * how many requests it may have in flight, and the audit trail of what it did.
 */
export class SessionGuard {
  /** The latest verified token's principal: same issuer, subject and tenant; its scopes may change. */
  principal: Principal;
  readonly #s: GuardState;

  constructor(principal: Principal, tenant: TenantPolicy, stores: LimitStores, audit: AuditLog | undefined, ids: GuardIds);
  constructor(principal: Principal, shared: GuardState);
  constructor(principal: Principal, tenant: TenantPolicy | GuardState, stores?: LimitStores, audit?: AuditLog, ids?: GuardIds) {
    this.principal = principal;
    this.#s = tenant instanceof GuardState ? tenant : new GuardState(tenant, stores!, audit, ids!);
  }

  /** The tenant's policy in force (a reload that changed the tenant's settings replaces it: retarget). */
  get tenant(): TenantPolicy {
    return this.#s.tenant;
  }

  /**
   * A guard of the same session that judges by `principal`'s scopes and shares everything else (tenant,
   * limits, audit): for requests that must not be judged by whichever token came last (a 2026-07-28
   * standing is shared by every client of one subject, each request with a token of its own).
   */
  as(principal: Principal): SessionGuard {
    return new SessionGuard(principal, this.#s);
  }

  /**
   * Each request's token decides its scopes: a refreshed token with more scopes (step-up) or fewer
   * (downgrade) takes effect at once. The edge has checked issuer, subject and tenant already.
   */
  refresh(principal: Principal): void {
    this.principal = principal;
  }

  /**
   * A reload changed the tenant's settings: the next request is judged by the new ones, on every guard of the
   * session. A limits.sessions the tenant did not have counts this open session from now on, past the limit
   * too (it is open): uncounted, a tenant with many sessions open was let open as many more as the limit said.
   */
  retarget(tenant: TenantPolicy): void {
    const s = this.#s;
    s.tenant = tenant;
    if (s.idleMs === 0 || s.holdsSession || tenant.config.limits.sessions === undefined) return;
    s.holdsSession = true;
    s.due = Date.now() + s.idleMs;
    void s.slots.open(tenant.name, s.ids.session, Number.MAX_SAFE_INTEGER, s.idleMs);
  }

  /** The session its audit lines name (a 2026-07-28 standing's id for modern requests). */
  get session(): string {
    return this.#s.ids.session;
  }

  check(method: string, params: Params): (Decision & Target) | undefined {
    const target = targetOf(method, params);
    if (!target) return undefined;
    // A completion names a resource template, not a URI: its {expressions} are no URI text (TenantPolicy.decide).
    const d = this.tenant.decide(target.kind, target.name, this.principal.scopes, target.absent === 'template' ? 'template' : true, this.#alias(target.kind, target.name));
    return { allowed: d.allowed, rule: d.rule, reason: d.reason, missingScopes: d.missingScopes, ...target };
  }

  /**
   * Whether the tenant may read `uri` now. A resource update is delivered only while it may: a
   * subscription made under rules a reload has since narrowed stops telling the client about the URI.
   */
  mayRead(uri: unknown): boolean {
    // As check('resources/read', {uri}) judges it, without building its target: every embedded resource asks.
    return typeof uri === 'string' && this.tenant.decide('resource', uri, this.principal.scopes).allowed;
  }

  /**
   * The tenant's argument rules for a tools/call the decision allowed, checked before it is routed so
   * that a refused call never reaches the upstream.
   */
  checkArguments(method: string, params: Params, upstreamWhenUnprefixed?: string): ArgumentViolation | undefined {
    const rules = this.tenant.argumentRules;
    if (!rules || method !== 'tools/call') return undefined; // tenants without rules pay nothing more
    // A name that is no string matches no rule, and the router refuses it (-32602): String() of the
    // client's `{"toString": 1}` threw here, an internal error logged with an incident.
    const name = params?.name;
    if (typeof name !== 'string') return undefined;
    return rules.check(name, params?.arguments, upstreamWhenUnprefixed === undefined ? undefined : prefixed(upstreamWhenUnprefixed, name));
  }

  /**
   * The confirmation rule that asks the user about this tools/call, if one does (the tenant's rules,
   * in order, by the called name and, on an endpoint that shows one upstream unprefixed, its prefixed name).
   */
  confirmRule(params: Params, upstreamWhenUnprefixed?: string): ConfirmRule | undefined {
    const rules = this.tenant.confirmRules;
    if (!rules) return undefined;
    const name = params?.name;
    if (typeof name !== 'string') return undefined; // as in checkArguments
    return rules.find(name, params?.arguments, upstreamWhenUnprefixed === undefined ? undefined : prefixed(upstreamWhenUnprefixed, name));
  }

  /**
   * A call a confirmation rule stopped: audited as a denial by that rule (`outcome` "cancelled" when the
   * client itself cancelled the call while the user was being asked).
   */
  unconfirmed(params: Params, rule: ConfirmRule, confirmation: ConfirmationOutcome, startedAt: number, upstream: string | undefined, outcome: 'denied' | 'cancelled' = 'denied'): void {
    this.record('tools/call', params, { allowed: false, rule: `confirm:${rule.match}` }, outcome, startedAt, undefined, upstream, undefined, confirmation);
  }

  /** Scopes the token lacks for this request, for an HTTP 403 insufficient_scope (step-up). */
  missingScopes(method: string, params: Params): string[] | undefined {
    if (!this.tenant.hasScopedRules) return undefined; // the common case costs nothing per request
    return this.check(method, params)?.missingScopes;
  }

  /** Whether the caller may see and call a tool (by the canonical name its rules match), as a list would show it. */
  allowsTool(name: string): boolean {
    return this.tenant.decide('tool', name, this.principal.scopes, false, this.#alias('tool', name)).allowed;
  }

  /** The prefixed name of a tool or prompt on an endpoint that shows its one upstream unprefixed. */
  #alias(kind: string, name: string): string | undefined {
    // A tenant that filters nothing decides both names alike: no second name to build on the hot path.
    if (kind === 'resource' || this.tenant.filtersNothing) return undefined;
    const upstream = this.#s.ids.unprefixed?.();
    return upstream === undefined ? undefined : prefixed(upstream, name);
  }

  /**
   * The list (or completion values: completion-values.ts) as the tenant may see it. A listed URI or template is held to the normal form a read or a
   * completion of it is: an upstream that spells a URI otherwise (`NOTES://all/1`, `https://h:443/x`)
   * must not show the tenant what a deny pattern written in normal form hides, nor a URI it cannot read.
   */
  filterList(method: string, result: Result, params?: Result): Result {
    // Completion values are names too: one that makes a URI the rules hide is left out as a list leaves it out.
    if (method === 'completion/complete') return shownCompletion(this, params, result);
    if (method === 'resources/read') return shownContents(this, params, result); // the contents of URIs other than the one asked
    if (method === 'tools/call' || method === 'prompts/get') return shownEmbedded(this, method, result); // resources embedded or linked
    const f = listOf(method);
    const items = f && result[f.key];
    if (!f || !Array.isArray(items)) return result;
    const asked = f.field === 'uriTemplate' ? 'template' : f.field === 'uri';
    const kept = items.filter((item: Record<string, unknown>) => this.tenant.decide(f.item, String(item[f.field]), this.principal.scopes, asked, this.#alias(f.item, String(item[f.field]))).allowed);
    return kept.length === items.length ? result : { ...result, [f.key]: kept };
  }

  /**
   * Opens a session slot for the tenant, due to expire after `idleMs` unused; refused at the tenant's
   * session limit with how long until the first slot it holds expires.
   */
  async openSession(idleMs: number): Promise<SlotAnswer> {
    const s = this.#s;
    // Set without a limit too: it marks a 2025 session's guard, which a reload that sets one counts (retarget).
    s.idleMs = idleMs;
    const max = this.tenant.config.limits.sessions;
    if (max === undefined) return { opened: true };
    const answer = await s.slots.open(this.tenant.name, s.ids.session, max, idleMs);
    s.holdsSession = answer.opened;
    s.due = Date.now() + idleMs;
    return answer;
  }

  /** The session was used: its slot expires a whole idle timeout from now (written once it moved enough to matter). */
  renewSession(): void {
    const s = this.#s;
    if (!s.holdsSession) return;
    const due = Date.now() + s.idleMs;
    if (due - s.due < Math.min(s.slots.precisionMs, s.idleMs / 4)) return;
    s.due = due;
    s.slots.renew(this.tenant.name, s.ids.session, s.idleMs);
  }

  /**
   * The session is busy (a stream open, a request in flight) and cannot expire: its slot must not look
   * due to others. Renewed once half its time is gone, not on every sweep (each is a write in Redis).
   */
  keepSession(): void {
    const s = this.#s;
    if (s.holdsSession && s.due - Date.now() < s.idleMs / 2) this.renewSession();
  }

  closeSession(): void {
    const s = this.#s;
    if (s.holdsSession) s.slots.close(this.tenant.name, s.ids.session);
    s.holdsSession = false;
    s.idleMs = 0; // ended: a reload after this opens no slot for it
  }

  /** A slot among the tenant's concurrent requests for request `id`; false at the limit. */
  acquireRequest(id: RequestId): boolean | Promise<boolean> {
    const max = this.tenant.config.limits.concurrentRequests;
    if (max === undefined) return true;
    const held = { key: `inflight:${this.tenant.name}`, slot: nextSlot() };
    const taken = (ok: boolean) => {
      if (ok) (this.#s.held ??= new RequestTable()).set(id, held);
      return ok;
    };
    const r = this.#s.counters.acquire(held.key, max, held.slot);
    return r instanceof Promise ? r.then(taken) : taken(r);
  }

  /** Request `id` is over: its slot, if it holds one, is given back (`afterMs` later: limits-stage.ts says why). */
  releaseRequest(id: RequestId, afterMs = 0): void {
    const s = this.#s;
    // Ended while its client was asked: its slot was given back then (one being taken back is let go when it lands).
    if (s.waiting !== undefined && s.waiting.size > 0) s.waiting.delete(id);
    const held = s.held?.get(id);
    if (held === undefined) return;
    s.held!.delete(id);
    // Held by no id meanwhile: the client may reuse this one, and the timer gives back only this slot.
    if (afterMs > 0) setTimeout(() => s.counters.release(held.key, held.slot), afterMs).unref();
    else s.counters.release(held.key, held.slot);
  }

  /**
   * `answer`: the client's answer to a question request `id` put to it for its upstream (elicitation,
   * sampling, roots), awaited without the request's slot. A person thinking holds no slot, and a
   * 2026-07-28 client may never retry: held, the slot locked the tenant out until the round expired.
   * The answer (or the question's end) takes the slot back before the upstream hears it, at the limit
   * too: a call already at its upstream is not refused halfway, and it counts again while it runs.
   */
  whileAsking<T>(id: RequestId | undefined, answer: () => Promise<T>): Promise<T> {
    if (id === undefined || !this.#lend(id)) return answer();
    return answer().finally(() => this.#retake(id));
  }

  /** Gives request `id`'s slot back for one more open question; false when it holds none (no limit). */
  #lend(id: RequestId): boolean {
    const s = this.#s;
    const open = s.waiting?.get(id);
    if (open !== undefined) {
      s.waiting!.set(id, open + 1);
      return true;
    }
    const held = s.held?.get(id);
    if (held === undefined) return false;
    s.held!.delete(id);
    (s.waiting ??= new RequestTable()).set(id, 1);
    s.counters.release(held.key, held.slot);
    return true;
  }

  /** One of request `id`'s questions is over: with the last, its slot is taken back (unless the request ended). */
  #retake(id: RequestId): void {
    const s = this.#s;
    const open = s.waiting?.get(id);
    if (open === undefined || open === 0) return;
    if (open > 1) return void s.waiting!.set(id, open - 1);
    const held = { key: `inflight:${this.tenant.name}`, slot: nextSlot() };
    // Counted past the limit (a maximum never reached): this acquisition is never refused.
    const r = s.counters.acquire(held.key, Number.MAX_SAFE_INTEGER, held.slot);
    if (!(r instanceof Promise)) return this.#holds(id, held);
    // Held only if, once the store took it, the request still waits for it (not ended, nor asking again).
    s.waiting!.set(id, 0);
    void r.then(() => (s.waiting?.get(id) === 0 ? this.#holds(id, held) : s.counters.release(held.key, held.slot)));
  }

  #holds(id: RequestId, held: Held): void {
    const s = this.#s;
    s.waiting!.delete(id);
    (s.held ??= new RequestTable()).set(id, held);
  }

  /**
   * A request refused before it was routed (scope step-up, a limit): audited as a denial with its rule.
   * `startedAt`: when the request began (its latency); `confirmation`: what the user answered, when a
   * confirmation rule asked before the refusal (the concurrent-request limit comes after it).
   */
  refused(method: string, params: Params, rule: string, startedAt = Date.now(), confirmation?: ConfirmationOutcome): void {
    this.record(method, params, { allowed: false, rule }, 'denied', startedAt, undefined, undefined, undefined, confirmation);
  }

  audits(method: string): boolean {
    return this.#s.audit !== undefined && methodSpec(method)?.audited === true;
  }

  /**
   * `resultBytes`: the answer's size as it arrived, when known; otherwise `result` is measured.
   * `confirmation`: what came of asking the user, for a call a confirmation rule asked about.
   */
  record(method: string, params: Params, decision: Decision, outcome: 'ok' | 'error' | 'tool_error' | 'denied' | 'cancelled', startedAt: number, result: unknown, upstream: string | undefined, resultBytes?: number, confirmation?: ConfirmationOutcome): void {
    const audit = this.#s.audit;
    if (!audit || !this.audits(method)) return;
    const target = targetOf(method, params)!;
    const event: AuditEvent = {
      tenant: this.tenant.name,
      subject: this.principal.subject,
      session: this.#s.ids.session,
      endpoint: this.#s.ids.endpoint,
      method,
      upstream,
      name: auditedName(target),
      decision: decision.allowed ? 'allow' : 'deny',
      rule: decision.rule,
      outcome,
      latencyMs: Date.now() - startedAt,
      responseBytes: resultBytes ?? (result === undefined ? 0 : Buffer.byteLength(JSON.stringify(result))),
    };
    if (confirmation !== undefined) event.confirmation = confirmation;
    audit.record(event, method === 'tools/call' || method === 'prompts/get' ? params?.arguments : undefined);
  }
}
