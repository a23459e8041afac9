import type { ProtocolRevision } from './protocol-revisions.js';

/**
 * The one table of MCP methods. Everything that needs to know something about a method — which way it
 * flows, what it reaches in the catalogue, how the router serves it, whether it may be retried, audited,
 * labelled in metrics — reads it here, so adding a method touches this file only.
 *
 * Lookups go through a Map: a method name is chosen by the client, and "__proto__" or "constructor"
 * must be as unknown as any other made-up name (a plain-object table answered them with its prototype).
 */

/** What a request reaches in the catalogue (what tenant policy decides on). */
export type CatalogueKind = 'tool' | 'resource' | 'prompt';

/** How a name the caller may not reach is reported (see notFound). */
export type AbsentKind = CatalogueKind | 'template';

export interface Target {
  kind: CatalogueKind;
  name: string;
  /** How "not found" is worded for it: a completion on a resource names a template. */
  absent: AbsentKind;
}

/** Which list a list method returns, and how its items are named. */
export interface ListSpec {
  /** The result's array member, and the key of the instance's catalogue for named lists. */
  key: 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
  /** What each item is, for policy filtering. */
  item: CatalogueKind;
  /** The item's member that policy and routing read. */
  field: 'name' | 'uri' | 'uriTemplate';
  /** Items are named (and prefixed on multi-upstream endpoints); resources keep their URIs. */
  named: boolean;
  /** The notification that tells clients to list again. */
  listChanged: string;
}

/**
 * How the router serves a client request: fan a list out, route by exposed name, by URI, by
 * completion reference, or fan logging/setLevel out. A method without a route is never forwarded.
 */
export type Route = 'list' | 'name' | 'uri' | 'subscribe' | 'unsubscribe' | 'complete' | 'setLevel';

export interface MethodSpec {
  readonly method: string;
  readonly kind: 'request' | 'notification';
  /** Who sends it: the client (to the gateway and on to upstreams), the server, or either side. */
  readonly from: 'client' | 'server' | 'either';
  readonly revisions: readonly ProtocolRevision[];
  /**
   * The capability it needs: for a client→server method the server capability the upstream must offer;
   * for a server→client request the client capability the client must have declared.
   */
  readonly capability?: string;
  readonly target?: (params: Params) => Target | undefined;
  readonly list?: ListSpec;
  readonly route?: Route;
  /** Safe to send twice: a retry after the upstream lost its session changes nothing. */
  readonly idempotent: boolean;
  /** Written to the audit log (the calls that reach one named thing and may act on it). */
  readonly audited: boolean;
  /** Its `method` label in metrics ("other" for methods that get no label of their own). */
  readonly metric: string;
  /** Metrics and audit name the one upstream that served it (found from its target). */
  readonly attributed: boolean;
  /** Changes what another replica must renew when it takes the session over. */
  readonly sessionState: boolean;
  /** 2026-07-28: may answer input_required (multi round-trip), so the gateway translates upstream asks into rounds. */
  readonly mrtr: boolean;
  /** 2026-07-28: its complete result carries ttlMs and cacheScope. */
  readonly cacheable: boolean;
}

type Params = Record<string, unknown> | undefined;

const LEGACY: readonly ProtocolRevision[] = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const EVERY: readonly ProtocolRevision[] = [...LEGACY, '2026-07-28'];
const SINCE_2025_06: readonly ProtocolRevision[] = ['2025-06-18', '2025-11-25', '2026-07-28'];
const ONLY_2025_11: readonly ProtocolRevision[] = ['2025-11-25'];
const MODERN: readonly ProtocolRevision[] = ['2026-07-28'];

/**
 * A client's name or URI as text. Not String() of an object: the client writes it, and its own `toString`
 * (`{"toString": 1}`) made String() throw, an internal error with an incident instead of the refusal.
 */
const text = (v: unknown): string => (v !== null && typeof v === 'object' ? Object.prototype.toString.call(v) : String(v));
const byName = (kind: 'tool' | 'prompt') => (p: Params): Target => ({ kind, name: text(p?.name), absent: kind });
const byUri = (p: Params): Target => ({ kind: 'resource', name: text(p?.uri), absent: 'resource' });
function byRef(p: Params): Target | undefined {
  const ref = p?.ref as Record<string, unknown> | undefined;
  if (ref?.type === 'ref/prompt') return { kind: 'prompt', name: text(ref.name), absent: 'prompt' };
  if (ref?.type === 'ref/resource') return { kind: 'resource', name: text(ref.uri), absent: 'template' };
  return undefined;
}

/** A row as written below: flags default to false; `labelled` gives the method its own metrics label. */
type Extra = Partial<Omit<MethodSpec, 'method' | 'metric' | 'kind' | 'from' | 'revisions'>> & { labelled?: boolean };
type Row = Extra & Pick<MethodSpec, 'kind' | 'from' | 'revisions'>;

const request = (from: MethodSpec['from'], revisions: readonly ProtocolRevision[], more: Extra = {}): Row => ({ kind: 'request', from, revisions, ...more });
const notification = (from: MethodSpec['from'], revisions: readonly ProtocolRevision[]): Row => ({ kind: 'notification', from, revisions });
const list = (capability: string, spec: ListSpec): Extra => ({ capability, list: spec, route: 'list', idempotent: true, labelled: true, cacheable: true });

const ROWS: Record<string, Row> = {
  // Lifecycle (the session era only: 2026-07-28 has no handshake).
  initialize: request('client', LEGACY, { labelled: true }),
  'notifications/initialized': notification('client', LEGACY),
  ping: request('either', LEGACY, { idempotent: true, labelled: true }),
  'server/discover': request('client', MODERN, { labelled: true, cacheable: true }),
  // The catalogue.
  'tools/list': request('client', EVERY, list('tools', { key: 'tools', item: 'tool', field: 'name', named: true, listChanged: 'notifications/tools/list_changed' })),
  'tools/call': request('client', EVERY, { capability: 'tools', target: byName('tool'), route: 'name', audited: true, attributed: true, labelled: true, mrtr: true }),
  'prompts/list': request('client', EVERY, list('prompts', { key: 'prompts', item: 'prompt', field: 'name', named: true, listChanged: 'notifications/prompts/list_changed' })),
  'prompts/get': request('client', EVERY, { capability: 'prompts', target: byName('prompt'), route: 'name', idempotent: true, audited: true, attributed: true, labelled: true, mrtr: true }),
  'resources/list': request('client', EVERY, list('resources', { key: 'resources', item: 'resource', field: 'uri', named: false, listChanged: 'notifications/resources/list_changed' })),
  'resources/templates/list': request('client', EVERY, list('resources', { key: 'resourceTemplates', item: 'resource', field: 'uriTemplate', named: false, listChanged: 'notifications/resources/list_changed' })),
  'resources/read': request('client', EVERY, { capability: 'resources', target: byUri, route: 'uri', idempotent: true, audited: true, attributed: true, labelled: true, mrtr: true, cacheable: true }),
  'resources/subscribe': request('client', LEGACY, { capability: 'resources', target: byUri, route: 'subscribe', sessionState: true, labelled: true }),
  'resources/unsubscribe': request('client', LEGACY, { capability: 'resources', target: byUri, route: 'unsubscribe', sessionState: true, labelled: true }),
  'completion/complete': request('client', EVERY, { capability: 'completions', target: byRef, route: 'complete', idempotent: true, labelled: true }),
  'logging/setLevel': request('client', LEGACY, { capability: 'logging', route: 'setLevel', sessionState: true, labelled: true }),
  'subscriptions/listen': request('client', MODERN, { labelled: true }),
  // Tasks (2025-11-25; an extension from 2026-07-28 on): not routed by the gateway.
  'tasks/get': request('either', ONLY_2025_11),
  'tasks/result': request('either', ONLY_2025_11),
  'tasks/list': request('either', ONLY_2025_11),
  'tasks/cancel': request('either', ONLY_2025_11),
  // Server→client requests (from 2026-07-28 on, only as input requests inside an input_required result).
  'sampling/createMessage': request('server', EVERY, { capability: 'sampling', labelled: true }),
  'elicitation/create': request('server', SINCE_2025_06, { capability: 'elicitation', labelled: true }),
  'roots/list': request('server', EVERY, { capability: 'roots', labelled: true }),
  // Notifications.
  'notifications/cancelled': notification('either', EVERY),
  'notifications/progress': notification('either', EVERY),
  'notifications/message': notification('server', EVERY),
  'notifications/resources/updated': notification('server', EVERY),
  'notifications/tools/list_changed': notification('server', EVERY),
  'notifications/prompts/list_changed': notification('server', EVERY),
  'notifications/resources/list_changed': notification('server', EVERY),
  'notifications/roots/list_changed': notification('client', LEGACY),
  'notifications/elicitation/complete': notification('server', ONLY_2025_11),
  'notifications/tasks/status': notification('either', ONLY_2025_11),
  'notifications/subscriptions/acknowledged': notification('server', MODERN),
};

const METHODS: ReadonlyMap<string, MethodSpec> = new Map(
  Object.entries(ROWS).map(([method, { labelled, ...row }]) => [
    method,
    Object.freeze({ idempotent: false, audited: false, attributed: false, sessionState: false, mrtr: false, cacheable: false, ...row, method, metric: labelled ? method : 'other' }),
  ]),
);

/** The method's row, or undefined for a method MCP does not define (whatever its name). */
export function methodSpec(method: string): MethodSpec | undefined {
  return METHODS.get(method);
}

export function allMethods(): Iterable<MethodSpec> {
  return METHODS.values();
}

/** A request a client may send to a server; anything else from a client is "method not found". */
export function isClientRequest(spec: MethodSpec | undefined): spec is MethodSpec {
  return spec !== undefined && spec.kind === 'request' && spec.from !== 'server';
}

/** Whether the method exists in a revision (a removed or unknown method does not). */
export function existsIn(spec: MethodSpec | undefined, revision: ProtocolRevision): spec is MethodSpec {
  return spec !== undefined && spec.revisions.includes(revision);
}

/** The metrics label of any method name: its own for the methods that have one, else "other". */
export function metricLabel(method: string): string {
  return METHODS.get(method)?.metric ?? 'other';
}

/** What a request reaches in the catalogue, when it reaches anything. */
export function targetOf(method: string, params: Params): Target | undefined {
  return METHODS.get(method)?.target?.(params);
}

/** The list a method returns, if it is a list method. */
export function listOf(method: string): ListSpec | undefined {
  return METHODS.get(method)?.list;
}

/** Every list method, in table order. */
export function listMethods(): Array<MethodSpec & { list: ListSpec }> {
  return [...METHODS.values()].filter((s): s is MethodSpec & { list: ListSpec } => s.list !== undefined);
}

/** The distinct list-changed notifications (one per catalogue kind). */
export function listChangedNotifications(): string[] {
  return [...new Set(listMethods().map((s) => s.list.listChanged))];
}

/**
 * For each server→client request that needs a client capability, that capability: a null-prototype
 * record, so a made-up method name reads undefined like any other.
 */
export function clientCapabilityNeeds(): Record<string, string> {
  const needs: Record<string, string> = Object.create(null);
  for (const s of METHODS.values()) if (s.from === 'server' && s.kind === 'request' && s.capability) needs[s.method] = s.capability;
  return needs;
}
