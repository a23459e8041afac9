import { capabilityName, missingCapability } from '../jsonrpc/client-capabilities.js';
import { invalidClientAnswer } from '../jsonrpc/client-answer.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import type { JsonRpcPeer } from '../jsonrpc/peer.js';
import type { JsonRpcRequest, RequestId } from '../jsonrpc/types.js';
import { MAX_QUOTED, type BoundedWarnings } from '../observability/bounded-warnings.js';
import { clipped } from '../observability/clipped.js';
import { LatestThrottle } from '../observability/latest-throttle.js';
import type { Logger } from '../observability/logger.js';
import type { Transport } from '../transport/transport.js';
import { activeCallersOf } from './upstream-caller.js';
import type { CallOptions, Target } from './upstream-client-hooks.js';

/** The upstream's own requests (sampling, elicitation, roots) awaiting a client's answer at once, at most, per connection. */
export const MAX_ASKING = 32;

/** The client's progress on one question, relayed to the upstream: ten as they come, then one a second (the latest). */
const PROGRESS_BURST = 10;
const PROGRESS_PER_SECOND = 1;

/** What the asks share with their UpstreamClient: its connection, and what it knows of the sessions on it. */
export interface AsksLink {
  /** The upstream's name, in what the operator and the upstream are told. */
  readonly name: string;
  readonly transport: Transport;
  readonly peer: JsonRpcPeer<CallOptions>;
  readonly logger: Logger;
  readonly warnings: BoundedWarnings;
  /** The client capabilities declared to the upstream (at initialize, or per modern request): what it may ask. */
  declared(): Record<string, unknown>;
  /** The session a message started by the upstream belongs to (`related`: the request it came with). */
  target(related: RequestId | undefined): Target | undefined;
  /** One could be put to no single session (see UpstreamClientHooks.onUnattributed). */
  onUnattributed?: ((method: string) => void) | undefined;
}

/**
 * The upstream's own requests (sampling, elicitation, roots), each put to the client session it belongs to
 * and its answer relayed back; refused (answered with an error, said where the operator looks) when it was
 * not declared, no session can be told, or too many already wait for a client.
 */
export class UpstreamAsks {
  readonly #link: AsksLink;

  constructor(link: AsksLink) {
    this.#link = link;
  }

  /** A request from the upstream (`related`: the request of the gateway's it came with, if the transport knows). */
  asked(req: JsonRpcRequest, related: RequestId | undefined): void {
    const { peer, transport } = this.#link;
    if (req.method === 'ping') return this.#reply(req.id, {});
    const missing = missingCapability(this.#link.declared(), req.method, req.params);
    if (missing) return this.#undeclared(req, capabilityName(missing));
    const target = this.#link.target(related);
    if (!target) return this.#unattributed(req, related);
    // Each waits for a client (maybe a person, for minutes): one asking without end (or reusing an id) is refused, not relayed.
    if (peer.accepted >= MAX_ASKING || peer.accepting(req.id)) return this.#tooMany(req);
    const cancel = peer.accept(req.id);
    // The upstream waits on the client (maybe a person): the caller's calls here do not time out meanwhile.
    const resume = peer.pause((o) => o.caller === target.caller);
    // The client's progress on it goes back to the upstream that asked for it (the spec's either-way progress),
    // at a bounded rate: a client's notifications take no requestsPerSecond token, and each was written to the
    // upstream as it came, a shared one (serving other tenants on the same pipe) too. Only the latest matters.
    const wantsProgress = (req.params?._meta as Record<string, unknown> | undefined)?.progressToken !== undefined;
    const relayed = wantsProgress
      ? new LatestThrottle<Record<string, unknown>>((params) => {
          if (!cancel.aborted) transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params }).catch(() => {});
        }, PROGRESS_PER_SECOND, PROGRESS_BURST)
      : undefined;
    const progress = relayed ? (params: Record<string, unknown>) => relayed.offer(params) : undefined;
    target.caller
      .clientRequest(req.method, req.params, target.relatedRequestId, cancel, progress, this.#link.name)
      .then(
        (result) => {
          if (!cancel.aborted) this.#answer(req.id, req.method, result); // the upstream cancelled it: it expects no answer
        },
        (err: unknown) => {
          if (cancel.aborted) return; // the upstream cancelled it: it expects no answer
          this.#replyError(req.id, err instanceof JsonRpcError ? err : new JsonRpcError(ErrorCode.InternalError, (err as Error).message));
        },
      )
      .finally(() => {
        relayed?.close(); // answered: progress held back is older than the answer
        resume();
        peer.done(req.id, cancel);
      });
  }

  /**
   * Refused rather than guessed: put to the wrong client, a sampling or elicitation request would show
   * one user another's prompt. Said where the operator looks (a warning, a metric), with the fix: the
   * client only sees its tool call fail.
   */
  #unattributed(req: JsonRpcRequest, related: RequestId | undefined): void {
    const { name, peer } = this.#link;
    const o = related === undefined ? undefined : peer.options(related);
    if (this.#link.declared().roots !== undefined) return this.#notYetOwned(req, related !== undefined && !o ? related : undefined);
    const sessions = activeCallersOf(peer.inflightOptions()).size;
    const why =
      related !== undefined && !o ? `the request it came with (${related}) has ended`
      : o ? `it came with the gateway's own ${peer.methodOf(related)}, which no client session sent`
      : `${sessions} sessions have requests in flight on this shared connection and the upstream did not say which one it is for`;
    const fix = `set sharing: per-session on upstream "${name}" (its sampling, elicitation and roots requests then always reach their client)`;
    // Any method the upstream names (an unknown one too), of any length: cut, as the line is meant to be a few hundred bytes.
    const method = clipped(req.method, MAX_QUOTED);
    this.#link.warnings.warn({ method, sessionsWithRequestsInFlight: sessions }, `refused "${method}" from upstream "${name}": ${why}; ${fix}`);
    this.#link.onUnattributed?.(req.method);
    const message = `the gateway cannot tell which client session "${req.method}" is for; use sharing: per-session for upstreams that send it while serving several sessions`;
    this.#replyError(req.id, new JsonRpcError(ErrorCode.InternalError, message));
  }

  /**
   * A dedicated (per-session) connection with no session to ask: a warm spare before its session
   * (server-everything asks for roots as it starts; roots/list_changed tells it when its session is ready),
   * or an ended call. No config to fix: no warning to set the per-session sharing it has, and not a shared
   * upstream's unattributed request (the metric).
   */
  #notYetOwned(req: JsonRpcRequest, ended: RequestId | undefined): void {
    const why = ended !== undefined ? `the request it came with (${ended}) has ended` : 'no client session is attached to this instance yet';
    const method = clipped(req.method, MAX_QUOTED);
    this.#link.logger.debug({ method }, `refused "${method}" from upstream "${this.#link.name}": ${why}`);
    this.#replyError(req.id, new JsonRpcError(ErrorCode.InternalError, `${why}; "${req.method}" has no client to go to`));
  }

  #tooMany(req: JsonRpcRequest): void {
    const method = clipped(req.method, MAX_QUOTED);
    const said = `refused "${method}" from upstream "${this.#link.name}": ${MAX_ASKING} of its requests already await a client's answer`;
    this.#link.warnings.warn({ method, limit: MAX_ASKING }, said);
    const message = `${MAX_ASKING} of this connection's requests already await a client's answer; ask again once they are answered`;
    this.#replyError(req.id, new JsonRpcError(ErrorCode.InternalError, message));
  }

  /**
   * Refused as a client refuses what it did not declare (-32601), never relayed: a shared server asking
   * for roots would otherwise learn the workspace of whichever user the routing guess picked.
   */
  #undeclared(req: JsonRpcRequest, capability: string): void {
    const name = this.#link.name;
    const fix = req.method === 'roots/list' ? `; a shared connection is not offered roots: set sharing: per-session on upstream "${name}" if it needs them` : '';
    this.#link.warnings.warn({ method: req.method }, `refused "${req.method}" from upstream "${name}": the gateway did not declare ${capability} to it${fix}`);
    const message = `the gateway did not declare ${capability} to this connection, so "${req.method}" is not relayed`;
    this.#replyError(req.id, new JsonRpcError(ErrorCode.MethodNotFound, message));
  }

  // Answers to the upstream's own requests: a connection that closes meanwhile has nobody to tell.
  #reply(id: RequestId, result: Record<string, unknown>): void {
    this.#link.transport.send({ jsonrpc: '2.0', id, result }).catch(() => {});
  }

  /** A client's answer to the upstream's request; one that breaks the schema of what it answers is refused instead (client-answer.ts). */
  #answer(id: RequestId, method: string, result: Record<string, unknown>): void {
    const bad = invalidClientAnswer(method, result);
    if (bad) this.#replyError(id, bad);
    else this.#reply(id, result);
  }

  #replyError(id: RequestId, err: JsonRpcError): void {
    this.#link.transport.send(err.toResponse(id)).catch(() => {});
  }
}
