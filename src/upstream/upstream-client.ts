import { GatewayError } from '../errors.js';
import { ErrorCode } from '../jsonrpc/error-codes.js';
import type { Cancellation } from '../jsonrpc/cancellation.js';
import { JsonRpcError } from '../jsonrpc/json-rpc-error.js';
import { noteWireSize } from '../jsonrpc/wire-size.js';
import { isFailure, isNotification, isRequest, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../jsonrpc/types.js';
import type { Logger } from '../observability/logger.js';
import type { Transport } from '../transport/transport.js';
import type { UpstreamCaller, UpstreamIdentity } from './upstream-caller.js';

import { SESSION_PROTOCOL_VERSIONS } from '../jsonrpc/protocol-revisions.js';
export const GATEWAY_PROTOCOL_VERSION = SESSION_PROTOCOL_VERSIONS[0];
export const UPSTREAM_PROTOCOL_VERSIONS: readonly string[] = SESSION_PROTOCOL_VERSIONS;

export interface CallOptions {
  caller?: UpstreamCaller | undefined;
  /** The client's own id for the request, so messages it causes go to the client on the right stream. */
  callerRequestId?: RequestId | undefined;
  signal?: Cancellation | undefined;
  timeoutMs: number;
  maxTimeoutMs: number;
  /** Called with each progress notification's params, the upstream's token already replaced by the client's. */
  onProgress?: ((params: Record<string, unknown>) => void) | undefined;
}

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
  deadline: number;
  timeoutMs: number;
  caller: UpstreamCaller | undefined;
  callerRequestId: RequestId | undefined;
  clientToken: string | number | undefined;
  onProgress: CallOptions['onProgress'];
  isInitialize: boolean;
  cleanup: () => void;
}

type Target = { caller: UpstreamCaller; relatedRequestId: RequestId | undefined };

export interface UpstreamClientHooks {
  /** Decides which session a message started by the upstream belongs to. */
  resolveCaller(client: UpstreamClient): { caller: UpstreamCaller; relatedRequestId: RequestId | undefined } | undefined;
  /** `target` resolves the session lazily: most notifications (list_changed, updates) never need it. */
  onNotification(method: string, params: Record<string, unknown> | undefined, target: () => ReturnType<UpstreamClientHooks['resolveCaller']>): void;
  /** A result larger than this (on the wire) fails its call instead of reaching the client. */
  maxResultBytes?: number | undefined;
}

/**
 * The gateway as an MCP client of one upstream connection. Every request gets an id from this
 * connection's own counter (so two sessions reusing the same ids never collide) and the progress token
 * is replaced by one derived from that id; the answer is handed back to the caller by promise, which is
 * where the client's original id is restored.
 */
const NOTHING = () => {};

export class UpstreamClient {
  readonly #transport: Transport;
  readonly #name: string;
  readonly #logger: Logger;
  readonly #hooks: UpstreamClientHooks;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  /** Requests the upstream sent us, by its id, so its notifications/cancelled can abort them. */
  readonly #incoming = new Map<RequestId, AbortController>();
  #closedError: GatewayError | undefined;
  identity: UpstreamIdentity | undefined;

  constructor(name: string, transport: Transport, logger: Logger, hooks: UpstreamClientHooks) {
    this.#name = name;
    this.#transport = transport;
    this.#logger = logger;
    this.#hooks = hooks;
    transport.onmessage = (m, extra) => this.#onMessage(m, extra?.relatedRequestId, extra?.bytes);
    transport.onclose = () => this.#onClose();
  }

  get inflight(): number {
    return this.#pending.size;
  }

  get closed(): boolean {
    return this.#closedError !== undefined;
  }

  /** Callers with requests in flight here, each with its most recent client request id. */
  activeCallers(): Map<UpstreamCaller, RequestId | undefined> {
    const out = new Map<UpstreamCaller, RequestId | undefined>();
    for (const p of this.#pending.values()) if (p.caller) out.set(p.caller, p.callerRequestId);
    return out;
  }

  /**
   * `dedicated`: this connection serves one client session, so everything the upstream asks can be put
   * to that client, roots included. A shared connection is not told about roots: they are one client's
   * workspace, and no single client stands behind a shared upstream.
   */
  async initialize(timeoutMs: number, dedicated = true): Promise<UpstreamIdentity> {
    const capabilities: Record<string, unknown> = { sampling: {}, elicitation: { form: {}, url: {} } };
    if (dedicated) capabilities.roots = { listChanged: true };
    const result = await this.request(
      'initialize',
      {
        protocolVersion: GATEWAY_PROTOCOL_VERSION,
        // Sampling and elicitation go to the client session whose request caused them; a session whose
        // client lacks the capability answers the upstream with an error instead.
        capabilities,
        clientInfo: { name: 'switchboard', version: '0.1.0' },
      },
      { timeoutMs, maxTimeoutMs: timeoutMs },
    );
    const version = result.protocolVersion;
    if (typeof version !== 'string' || !UPSTREAM_PROTOCOL_VERSIONS.includes(version)) {
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${this.#name}" answered initialize with unsupported protocol version ${JSON.stringify(version)}`, { upstream: this.#name });
    }
    if (!result.capabilities || typeof result.capabilities !== 'object') {
      throw new GatewayError('SWB_UPSTREAM_PROTOCOL', `upstream "${this.#name}" sent no capabilities in its initialize result`, { upstream: this.#name });
    }
    this.identity = result as unknown as UpstreamIdentity;
    await this.notify('notifications/initialized');
    // Not ready until the link can carry what the upstream sends on its own (its GET stream).
    await this.#transport.opened?.();
    return this.identity;
  }

  request(method: string, params: Record<string, unknown> | undefined, opts: CallOptions): Promise<Record<string, unknown>> {
    if (this.#closedError) return Promise.reject(this.#closedError);
    if (opts.signal?.aborted) return Promise.reject(new GatewayError('SWB_SESSION_CLOSED', 'request cancelled'));
    const id = this.#nextId++;
    let outParams = params;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const clientToken = meta?.progressToken as string | number | undefined;
    if (clientToken !== undefined) {
      // The upstream's token space is shared by every session on this connection: use our own id.
      outParams = { ...params, _meta: { ...meta, progressToken: id } };
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.has(id)) return;
        this.#finish(id);
        this.notify('notifications/cancelled', { requestId: id, reason: String(opts.signal?.reason ?? 'cancelled by the client') }).catch(() => {});
        reject(new GatewayError('SWB_SESSION_CLOSED', 'request cancelled'));
      };
      const p: Pending = {
        resolve,
        reject,
        timer: undefined,
        deadline: Date.now() + opts.maxTimeoutMs,
        timeoutMs: opts.timeoutMs,
        caller: opts.caller,
        callerRequestId: opts.callerRequestId,
        clientToken,
        onProgress: opts.onProgress,
        isInitialize: method === 'initialize',
        cleanup: NOTHING,
      };
      this.#pending.set(id, p);
      this.#arm(id, p, opts.timeoutMs);
      if (opts.signal) p.cleanup = opts.signal.onAbort(onAbort);
      this.#transport.send({ jsonrpc: '2.0', id, method, params: outParams } as JsonRpcRequest).catch((err: Error) => {
        if (!this.#pending.has(id)) return;
        this.#finish(id);
        reject(
          err.name === 'SessionExpiredError'
            ? new GatewayError('SWB_UPSTREAM_SESSION_EXPIRED', err.message, { upstream: this.#name })
            : new GatewayError('SWB_UPSTREAM_UNAVAILABLE', `upstream "${this.#name}" could not be reached: ${err.message}`, { upstream: this.#name }),
        );
      });
    });
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    if (this.#closedError) return;
    await this.#transport.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  close(): Promise<void> {
    return this.#transport.close();
  }

  #arm(id: number, p: Pending, ms: number): void {
    if (p.timer) clearTimeout(p.timer);
    const wait = Math.max(0, Math.min(ms, p.deadline - Date.now()));
    p.timer = setTimeout(() => {
      if (!this.#pending.has(id)) return;
      this.#finish(id);
      // initialize is never cancelled (the spec forbids it); the instance is restarted instead.
      if (!p.isInitialize) this.notify('notifications/cancelled', { requestId: id, reason: 'timed out at the gateway' }).catch(() => {});
      p.reject(new GatewayError('SWB_UPSTREAM_TIMEOUT', `upstream "${this.#name}" did not answer within ${ms} ms`, { upstream: this.#name }));
    }, wait);
  }

  #finish(id: number): Pending | undefined {
    const p = this.#pending.get(id);
    if (!p) return undefined;
    this.#pending.delete(id);
    if (p.timer) clearTimeout(p.timer);
    p.cleanup();
    return p;
  }

  /** The session a message belongs to when the transport says which of our requests carried it. */
  #relatedTarget(related: RequestId | undefined): Target | undefined {
    const p = typeof related === 'number' ? this.#pending.get(related) : undefined;
    return p?.caller ? { caller: p.caller, relatedRequestId: p.callerRequestId } : undefined;
  }

  #onMessage(m: JsonRpcMessage, related?: RequestId, bytes?: number): void {
    if (isRequest(m)) {
      this.#onServerRequest(m, this.#relatedTarget(related));
      return;
    }
    if (isNotification(m)) {
      this.#onNotification(m.method, m.params, related);
      return;
    }
    if (typeof m.id !== 'number') {
      this.#logger.warn({ id: m.id }, 'upstream answered an id the gateway never sent; ignored');
      return;
    }
    const p = this.#finish(m.id);
    if (!p) return; // answered after a cancellation or timeout: the race the spec warns about
    const max = this.#hooks.maxResultBytes;
    // Errors too: an error's message and data reach the client as much as a result does.
    if (max !== undefined && bytes !== undefined && bytes > max) {
      this.#logger.warn({ bytes, limit: max }, 'upstream answer over maxResultBytes; the call fails');
      p.reject(new GatewayError('SWB_RESULT_TOO_LARGE', `upstream "${this.#name}" returned ${isFailure(m) ? 'an error' : 'a result'} of ${bytes} bytes, more than the limit of ${max} (maxResultBytes)`, { upstream: this.#name, bytes, limit: max }));
      return;
    }
    if (isFailure(m)) {
      p.reject(JsonRpcError.from(m.error));
      return;
    }
    if (bytes !== undefined) noteWireSize(m.result, bytes);
    p.resolve(m.result);
  }

  #onNotification(method: string, params: Record<string, unknown> | undefined, related?: RequestId): void {
    if (method === 'notifications/progress') {
      const token = params?.progressToken;
      const p = typeof token === 'number' ? this.#pending.get(token) : undefined;
      if (!p || p.clientToken === undefined) return;
      this.#arm(token as number, p, p.timeoutMs); // progress resets the timer; the deadline still holds
      p.onProgress?.({ ...params, progressToken: p.clientToken });
      return;
    }
    if (method === 'notifications/cancelled') {
      const id = params?.requestId as RequestId | undefined;
      if (id !== undefined) this.#incoming.get(id)?.abort(params?.reason ?? 'cancelled by the upstream');
      return;
    }
    this.#hooks.onNotification(method, params, () => this.#relatedTarget(related) ?? this.#hooks.resolveCaller(this));
  }

  #onServerRequest(req: JsonRpcRequest, related: Target | undefined): void {
    if (req.method === 'ping') {
      this.#reply(req.id, {});
      return;
    }
    const target = related ?? this.#hooks.resolveCaller(this);
    if (!target) {
      this.#replyError(
        req.id,
        new JsonRpcError(ErrorCode.InternalError, `the gateway cannot tell which client session "${req.method}" is for; use sharing: per-session for upstreams that send it while serving several sessions`),
      );
      return;
    }
    const ac = new AbortController();
    this.#incoming.set(req.id, ac);
    target.caller
      .clientRequest(req.method, req.params, target.relatedRequestId, ac.signal)
      .then(
        (result) => {
          if (!ac.signal.aborted) this.#reply(req.id, result); // the upstream cancelled it: it expects no answer
        },
        (err: unknown) => {
          if (ac.signal.aborted) return; // the upstream cancelled it: it expects no answer
          this.#replyError(req.id, err instanceof JsonRpcError ? err : new JsonRpcError(ErrorCode.InternalError, (err as Error).message));
        },
      )
      .finally(() => this.#incoming.delete(req.id));
  }

  #reply(id: RequestId, result: Record<string, unknown>): void {
    this.#transport.send({ jsonrpc: '2.0', id, result }).catch(() => {});
  }

  #replyError(id: RequestId, err: JsonRpcError): void {
    this.#transport.send(err.toResponse(id)).catch(() => {});
  }

  #onClose(): void {
    const why = this.#transport.closeReason;
    this.#closedError ??= new GatewayError('SWB_UPSTREAM_CRASHED', why ? `upstream "${this.#name}": ${why}` : `upstream "${this.#name}" closed its connection while requests were in flight`, { upstream: this.#name });
    for (const id of [...this.#pending.keys()]) this.#finish(id)!.reject(this.#closedError);
    for (const ac of this.#incoming.values()) ac.abort('upstream closed');
    this.#incoming.clear();
  }
}
