import type { UpstreamConfig } from '../config/schema.js';
import { metricLabel } from '../jsonrpc/methods.js';
import type { Logger } from '../observability/logger.js';
import { ATTR } from '../observability/trace-attributes.js';
import type { TraceAttributes, Tracing } from '../observability/tracing.js';
import type { Transport, TransportError } from '../transport/transport.js';
import type { InstanceCatalogues } from './instance-catalogues.js';
import { leftOutOf } from './left-out-tools.js';
import { ListChangedThrottle } from './list-changed-throttle.js';
import { messageOwner } from './message-owner.js';
import { StdioTransport } from './stdio-transport.js';
import type { UpstreamCaller } from './upstream-caller.js';
import { UpstreamClient } from './upstream-client.js';

/** What the clients read of their instance (UpstreamInstance satisfies it): read as each message comes. */
export interface ClientsInstance {
  readonly config: UpstreamConfig;
  /** Set for a per-session instance: the one session every upstream-initiated message belongs to. */
  readonly dedicatedTo: UpstreamCaller | undefined;
  readonly catalogues: InstanceCatalogues;
  /** 'notification' (method, params, target), 'unattributed' (the method's metrics label). */
  emit(event: 'notification' | 'unattributed', ...args: unknown[]): boolean;
}

/** What the instance hears of a client's transport, privately. */
export interface ClientEnds {
  /** The transport closed (crashed, closed, session expired): after the client itself has heard. */
  exited(client: UpstreamClient, reason?: TransportError): void;
  /** The transport's process was replaced (its token renewed or narrowed; see RetiringClients). */
  replaced(client: UpstreamClient): void;
}

/**
 * Makes the client of each process (or connection) an instance starts, wired to the instance: whom the
 * upstream's own messages belong to, its notifications through the catalogues (which list afresh) and the
 * list_changed throttle, the tool definitions its transport asks for, its transport's close and errors.
 */
export class InstanceClients {
  readonly #instance: ClientsInstance;
  readonly #ends: ClientEnds;
  readonly #logger: Logger;
  readonly #tracing: Tracing;
  /** Names the instance in its spans. */
  readonly #traceAttributes: TraceAttributes | undefined;
  /** At most one list_changed a second of each kind (it outlives a process: a restart's burst is one). */
  readonly #listChanged: ListChangedThrottle;

  constructor(instance: ClientsInstance, ends: ClientEnds, logger: Logger, tracing: Tracing, traceAttributes: TraceAttributes | undefined) {
    this.#instance = instance;
    this.#ends = ends;
    this.#logger = logger;
    this.#tracing = tracing;
    this.#traceAttributes = traceAttributes;
    this.#listChanged = new ListChangedThrottle((method) => instance.emit('notification', method, undefined, () => undefined));
  }

  /** The client of a process just built (`transport`, not started yet). */
  create(transport: Transport): UpstreamClient {
    const instance = this.#instance;
    const ends = this.#ends;
    const config = instance.config;
    transport.toolDefinition = (name) => instance.catalogues.tools?.get(name); // long-lived: one per transport
    const client: UpstreamClient = new UpstreamClient(config.name, transport, this.#logger, {
      maxResultBytes: config.maxResultBytes,
      leftOut: leftOutOf(config), // warned once per upstream, not per process
      tracing: this.#tracing,
      traceAttributes: () => ({
        ...this.#traceAttributes,
        [ATTR.processPid]: transport instanceof StdioTransport ? transport.pid : undefined,
      }),
      resolveCaller: (c, ownRequest) => messageOwner(c, instance.dedicatedTo, ownRequest),
      // As its metrics label: an upstream may send any method name, a label must stay bounded.
      onUnattributed: (method) => instance.emit('unattributed', metricLabel(method)),
      toolHeadersChanged: (name) => instance.catalogues.headersChangedOnRelist(name),
      onNotification: (method, params, target) => {
        // At once, though the notification may be held back: the next use lists afresh.
        instance.catalogues.heard(method);
        if (!this.#listChanged.offer(method)) instance.emit('notification', method, params, target);
      },
    });
    const closed = transport.onclose; // the client's own (set as it was built): it hears the close first
    // long-lived: one per transport
    transport.onclose = (reason?: TransportError) => {
      closed?.(reason);
      ends.exited(client, reason);
    };
    transport.onerror = (err) => this.#logger.warn({ err }, 'upstream transport error'); // long-lived: one per transport
    transport.onreplaced = () => ends.replaced(client); // long-lived: one per transport
    return client;
  }
}
