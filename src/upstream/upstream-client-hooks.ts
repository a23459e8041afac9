import type { Linger, OutgoingOptions } from '../jsonrpc/peer.js';
import type { RequestId } from '../jsonrpc/types.js';
import type { TraceAttributes, Tracing } from '../observability/tracing.js';
import type { UpstreamCaller } from './upstream-caller.js';

// What an UpstreamClient is given and asked with: the options of each request, and the hooks of its owner (the instance).

export interface CallOptions extends OutgoingOptions {
  caller?: UpstreamCaller | undefined;
  /** The client's own id for the request, so messages it causes go to the client on the right stream. */
  callerRequestId?: RequestId | undefined;
  maxTimeoutMs: number;
  acknowledged?: ((notifications: Record<string, unknown>) => void) | undefined; // a subscriptions/listen's: the filter the upstream honours
}

/** Every member of T present, each possibly undefined: an object literal of this type names them all. */
type EveryMember<T> = { [K in keyof Required<T>]: T[K] | undefined };

/**
 * A request's options for its upstream client: the caller's, with the instance's timeouts, its breaker's
 * ear and how its concurrency slot outlives a cancellation. Written out member by member, not spread (`{ ...opts, timeoutMs, … }`): on Node 20
 * (V8 11.3) an object made by a spread cannot keep a transition for a member added after it, so every
 * call made a new hidden class (about 10 k instructions, every inline cache that saw one of them
 * megamorphic, and classes for the major GC to sweep). EveryMember makes a member added to CallOptions
 * and not here a compile error.
 */
export function callOptions(o: Omit<CallOptions, 'timeoutMs' | 'maxTimeoutMs' | 'linger'>, timeoutMs: number, maxTimeoutMs: number, onAnswering: () => void, linger: Linger): CallOptions {
  const out: EveryMember<CallOptions> = {
    caller: o.caller,
    callerRequestId: o.callerRequestId,
    acknowledged: o.acknowledged,
    signal: o.signal,
    relatedRequestId: o.relatedRequestId,
    onProgress: o.onProgress,
    receipt: o.receipt,
    timeoutMs,
    maxTimeoutMs,
    onAnswering,
    linger,
  };
  return out as CallOptions;
}

/** What a client tells of itself to its owner's resolveCaller: the sessions with requests in flight on it (UpstreamClient). */
export interface CallersOf {
  activeCallers(): Map<UpstreamCaller, RequestId | undefined>;
}

export type Target = { caller: UpstreamCaller; relatedRequestId: RequestId | undefined };

export interface UpstreamClientHooks {
  /**
   * Decides which session a message started by the upstream belongs to. `ownRequest`: it came with a
   * request of the gateway's own, which no session sent (another session busy there did not ask it).
   */
  resolveCaller(client: CallersOf, ownRequest?: boolean): { caller: UpstreamCaller; relatedRequestId: RequestId | undefined } | undefined;
  /** `target` resolves the session lazily: most notifications (list_changed, updates) never need it. */
  onNotification(method: string, params: Record<string, unknown> | undefined, target: () => ReturnType<UpstreamClientHooks['resolveCaller']>): void;
  /** The tools left out of its lists already warned about (shared by the upstream's connections); absent: the connection's own. */
  leftOut?: Set<string> | undefined;
  /** A result larger than this (on the wire) fails its call instead of reaching the client. */
  maxResultBytes?: number | undefined;
  /** A request of the upstream's (sampling, elicitation, roots) that no single session could be found for: refused. */
  onUnattributed?(method: string): void;
  /** A modern upstream refused a call of tool `name` for its headers (-32020): true once the tools, listed afresh, show its annotations changed (it is then made again). */
  toolHeadersChanged?(name: unknown): Promise<boolean>;
  /** Client spans for requests made while a traced request is served; absent or off: none. */
  tracing?: Tracing | undefined;
  /** Who this connection is, for its spans (upstream, instance, transport, address): fixed for the client's life (it is read once per identity). */
  traceAttributes?(): TraceAttributes;
}
