import type { UpstreamConfig } from '../../config/schema.js';
import type { UpstreamCaller } from '../upstream-caller.js';
import type { UpstreamInstance } from '../upstream-instance.js';
import type { UpstreamUser } from '../upstream-user.js';

/**
 * How the instances of one upstream are shared by sessions (config `sharing`): shared, per-tenant,
 * per-user or per-session. The pool hands every question whose answer depends on the mode to its
 * strategy, so nothing outside the pool branches on the mode.
 */
export interface SharingStrategy {
  /** Every instance alive (every tenant's), for metrics and operators. */
  readonly instances: ReadonlySet<UpstreamInstance>;
  /** A session's upstream state survives a move to another replica (it holds no instance of its own). */
  readonly movable: boolean;
  /** Able to take sessions: shared instances are up; modes that start instances with sessions always are. */
  readonly ready: boolean;
  /** Sessions waiting for an instance. */
  readonly waiting: number;
  /** Starts what runs ahead of sessions (shared instances, warm spares); resolves once each started or failed. */
  start(): Promise<void>;
  /** A session opens: the instance it holds for its whole life, or undefined when it holds none. */
  lease(caller: UpstreamCaller): Promise<UpstreamInstance | undefined>;
  /** A session that held `inst` is over. */
  release(inst: UpstreamInstance): Promise<void>;
  /** A session ended while its lease may still be waiting (modes that queue sessions): that wait ends now. */
  abandon?(caller: UpstreamCaller): void;
  /** The instance for a session's next request; throws a GatewayError when none can serve it. */
  pick(caller: UpstreamCaller): UpstreamInstance;
  /** The instances a request for all of a session's upstream state reaches (logging/setLevel). */
  instancesFor(caller: UpstreamCaller): UpstreamInstance[];
  /** Whether what an instance says (list_changed, a restart) concerns a session. */
  serves(caller: UpstreamCaller, inst: UpstreamInstance): boolean;
  /** An instance whose catalogue every session sees (checked at startup), if the mode has one. */
  common(): UpstreamInstance | undefined;
  /** No new instances from here on. */
  drain(): void;
  close(): Promise<void>;
}

/** What a strategy needs from its pool: the config, and new instances wired to the pool's events. */
export interface InstanceSource {
  readonly config: UpstreamConfig;
  /**
   * A new, not yet started instance; `context` goes on its log lines (e.g. the tenant). A `dedicated`
   * one will serve one session at a time and is told that client's roots. An `owner`'s instance carries
   * that user's credentials (per-user).
   */
  create(context: Record<string, unknown>, dedicated?: boolean, owner?: UpstreamUser): UpstreamInstance;
  /** Unwires an instance the strategy is done with. */
  forget(inst: UpstreamInstance): void;
}
