import type { TraceSpan } from '../observability/tracing.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import type { MethodSpec, Target } from '../jsonrpc/methods.js';
import type { JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types.js';
import type { RequestTable } from '../jsonrpc/request-table.js';
import type { Logger } from '../observability/logger.js';
import type { ConfirmationOutcome } from '../policy/audit-log.js';
import type { Decision } from '../policy/decision.js';
import type { SessionGuard } from '../policy/session-guard.js';
import type { EndpointRouter, RouterSession } from '../router/index.js';
import type { DefinitionScreen } from '../router/definition-screen.js';
import type { RequestDone, SessionObserver } from './session-observer.js';
import type { ToolWorkingSet } from './tool-working-set.js';

export type SessionState = 'UNINITIALIZED' | 'INITIALIZING' | 'ACTIVE' | 'SHUTDOWN';

/** What the stages may see and do of the session that runs them. */
export interface PipelineHost {
  readonly state: SessionState;
  /** The protocol era of the requests it runs (a metrics label). */
  readonly era: 'legacy' | 'modern';
  readonly guard: SessionGuard;
  readonly observer: SessionObserver;
  readonly endpoint: EndpointRouter;
  readonly router: RouterSession | undefined;
  readonly logger: Logger;
  /** A 2025 session's id and negotiated version (span attributes); a 2026-07-28 request has no session. */
  readonly session?: { readonly id: string; readonly protocolVersion: string | undefined } | undefined;
  /** The client's requests in flight, by its id, each with its cancellation. */
  readonly inflight: RequestTable<Cancellation>;
  /**
   * The spans of its traced requests in flight, by the client's id (kept by the trace stage): a request
   * the gateway sends the client because of one finds its parent here, outside that request's async
   * context (an upstream's message arrives on the upstream's own). Absent where nothing is sent to a client.
   */
  readonly spans?: RequestTable<TraceSpan> | undefined;
  initialize(req: JsonRpcRequest): Promise<JsonRpcResponse>;
  /** Resolves true once the client has said notifications/initialized, false if it did not in time. */
  whenActive(): Promise<boolean>;
  /** Sends a progress notification on the stream of the request it belongs to. */
  progress(params: Record<string, unknown>, relatedRequestId: RequestId): void;
  /** A request that changes what another replica must renew (subscriptions, log level) succeeded. */
  stateChanged(method: string, params: Record<string, unknown> | undefined): void;
  /** The client cancelled the request: it expects no answer, and its stream may let go of it. */
  release(id: RequestId): void;
  /** The tools this session found with search_tools (search+working-set, 2025 sessions only), by exposed name. */
  readonly workingSet?: ToolWorkingSet | undefined;
  /**
   * Whether the client of request `id` can be asked a form-mode elicitation (a confirmation rule's
   * question): the session's declared capabilities, or in the 2026-07-28 era the request's own.
   */
  canElicit(id: RequestId): boolean;
  /**
   * Asks the client of request `id`, on the gateway's own behalf, `elicitation/create` with `params`:
   * a request on the stream of a 2025 session's call (a timeout sends it notifications/cancelled), an
   * input_required round answered by a sealed retry in the 2026-07-28 era. Resolves with the ElicitResult; rejects with a RequestTimeout-coded error when no
   * answer came within `timeoutMs`, and with another error when `signal` fired or the client failed.
   */
  elicit(params: Record<string, unknown>, id: RequestId, signal: Cancellation, timeoutMs: number): Promise<Record<string, unknown>>;
}

/** One client request on its way through the stages; each stage adds what it learned. */
export interface RequestContext {
  readonly req: JsonRpcRequest;
  /** The id the client sent, when the stages know the request by another (a 2026-07-28 exchange's number). */
  readonly clientId?: RequestId | undefined;
  /** Its row in the method table (undefined for a method MCP does not define). */
  readonly spec: MethodSpec | undefined;
  readonly host: PipelineHost;
  /** Wall clock (audit) and monotonic clock (metrics) at the start. */
  readonly startedAt: number;
  readonly t0: number;
  /** The policy decision on its target, when it has one. */
  decision?: (Decision & Target) | undefined;
  /** The tool name as the client sent it, when the gateway routes it by another (a renamed or shortened name). */
  exposedName?: string | undefined;
  /** A check of the called tool's definition before it is forwarded (a modern call's Mcp-Param-* headers). */
  checkDefinition?: ((definition: Record<string, unknown>) => void) | undefined;
  /** The hidden-text check of the definitions the request lists or calls (set by its stage when scanning is on). */
  screen?: DefinitionScreen | undefined;
  /** Set by the route stage, or beforehand by a caller that cancels the request from outside. */
  cancel?: Cancellation;
  result?: Record<string, unknown> | undefined;
  /** The result's size as it arrived from the upstream, when it was passed on unchanged (audit). */
  resultBytes?: number | undefined;
  /** What came of asking the user to confirm it, when a confirmation rule asked (the audit line says it). */
  confirmation?: ConfirmationOutcome | undefined;
  /** The request's span, while tracing is on (set by the trace stage): for what happens outside its async context. */
  span?: TraceSpan | undefined;
  /** Whether the router found the called tool's definition (set by the route stage): its name may be a label. */
  toolFound?: boolean | undefined;
  /** What the route threw, as thrown (stages read its type and code, never its message). */
  error?: unknown;
  response?: JsonRpcResponse;
  /**
   * A 2026-07-28 call's -32042 that became a URL round: no answer, so not counted by the observe stage; the
   * call is counted once, by the run made after the round or, ended in it, by ModernSession.endedInRound.
   */
  uncounted?: RequestDone | undefined;
}

/** Resolves to the response to send, or undefined when nothing must be sent (a cancelled request). */
export type Next = (ctx: RequestContext) => Promise<JsonRpcResponse | undefined>;

/** A stage either answers the request itself (a refusal) or hands it on with `next(ctx)`. */
export type Stage = (ctx: RequestContext, next: Next) => Promise<JsonRpcResponse | undefined>;

const END: Next = () => Promise.resolve(undefined);

/**
 * Composes stages the way undici composes interceptors: each wraps the ones after it, so a stage can
 * act before (refuse) and after (release a slot, record the outcome) the rest of the path. The chain
 * is built once: a request allocates no closures on its way through it.
 */
export function compose(stages: readonly Stage[]): Next {
  return stages.reduceRight<Next>((next, stage) => (ctx) => stage(ctx, next), END);
}

/** Seconds since the request started, for the duration metric. */
export function elapsed(ctx: RequestContext): number {
  return (performance.now() - ctx.t0) / 1000;
}

/**
 * Counts a request the gateway answered itself, before any upstream (a refusal, a meta-tool's own
 * answer): one place builds the duration metric's labels for every such answer, so they cannot drift.
 */
export function countUnrouted(ctx: RequestContext, outcome: string, tool: string | undefined): void {
  const { host } = ctx;
  host.observer.requestDone({ method: ctx.spec?.metric ?? 'other', endpoint: host.endpoint.config.path, upstream: 'none', outcome, seconds: elapsed(ctx), tool, era: host.era });
}
