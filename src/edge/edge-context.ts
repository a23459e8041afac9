import type { ResponseMode } from './streamable-session-transport.js';
import type { Cluster } from '../cluster/cluster.js';
import type { ModernService } from '../modern/modern-service.js';
import type { Tracing } from '../observability/tracing.js';
import type { AuditLog } from '../policy/audit-log.js';
import type { SessionRegistry } from '../session/index.js';
import type { EdgeAuth } from './authorize-request.js';
import type { ConnectionLimits } from './connection-limits.js';
import type { GuardOptions } from './request-guard.js';
import type { SseHub } from './sse-connection.js';

/** What the MCP routes of every endpoint share. */
export interface EdgeContext {
  registry: SessionRegistry;
  /** Set when sessions are shared with other replicas (Redis). */
  cluster?: Cluster | undefined;
  auth: EdgeAuth;
  hub: SseHub;
  guard: GuardOptions;
  /** Connection caps and body timers (absent in tests that build the routes alone). */
  limits?: ConnectionLimits | undefined;
  responseMode: ResponseMode;
  /** Client messages nesting deeper are refused with -32600. */
  maxJsonDepth?: number | undefined;
  /** A batch holding more messages is refused with -32600 (absent: no bound, in tests that build the routes alone). */
  maxBatchMessages?: number | undefined;
  resumable: boolean;
  /**
   * The path of server.publicUrl ('' or '/prefix', no trailing slash). Behind a proxy serving the gateway
   * under it (passing /prefix/... on as /...), the legacy endpoint event must name the messages path with it:
   * the client resolves that event against its own URL, and /messages alone left the prefix.
   */
  basePath?: string | undefined;
  /** The 2026-07-28 era (stateless requests), served on endpoints whose eras include it. */
  modern?: ModernService | undefined;
  /** The audit log (audit.enabled): a call refused at the edge for its tenant's rate is audited here. */
  audit?: AuditLog | undefined;
  /** Each HTTP refusal of the MCP routes (status, JSON-RPC code, message): counted and logged by the app. */
  refused?: ((status: number, code: number, message: string) => void) | undefined;
  /** Trace context taken from each POST's headers when tracing is on. */
  tracing?: Tracing | undefined;
}
